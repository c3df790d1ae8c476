/** The `upstreamsFrom` field of the gateway config: MCP client config files whose servers become upstreams. */
import { z } from 'zod';
import { CLIENT_CONFIG_FORMATS } from './format.js';

const serverNames = z.array(z.string().min(1));

/** `defaults`: the settings of an upstream that a client's file does not have (the gateway's schema passes them in). */
export const upstreamsFromSchema = <Defaults extends z.ZodType>(defaults: Defaults) =>
    z
        .array(
            z.strictObject({
                file: z
                    .string()
                    .min(1, { message: 'must name a file, e.g. "~/.cursor/mcp.json"' })
                    .describe('An MCP client\'s config file: relative to this config file, or "~/..." in the home folder.'),
                format: z
                    .enum(CLIENT_CONFIG_FORMATS)
                    .default('auto')
                    .describe(
                        'Which client wrote it. "auto": "servers" is VS Code\'s; "mcpServers" is read as Claude Desktop, Cursor and Claude Code write it (with both Claude Code\'s ${VAR} and Cursor\'s ${env:VAR}).'
                    ),
                inputs: z
                    .record(z.string(), z.string())
                    .default({})
                    .describe(
                        'Values of VS Code\'s ${input:ID} placeholders, by ID (e.g. {"api-key": "${API_KEY}"}). Without one here, the environment variable MCP_INPUT_<ID in upper snake case> is read.'
                    ),
                include: serverNames.optional().describe('Only these servers, by their names in the file. Default: all.'),
                exclude: serverNames.default([]).describe('Servers to leave out, by their names in the file.'),
                defaults: defaults.describe(
                    'Settings for every upstream made from this file, as those of an upstream in "upstreams" (timeoutMs, required, prompts, ...), e.g. a longer timeoutMs for servers started with npx. The id and the transport come from the file.'
                )
            })
        )
        .default([])
        .describe(
            'MCP client config files (Claude Desktop, Cursor, Claude Code, VS Code) whose servers become upstreams after those of "upstreams", with ids made from their names. Watched for changes like this file.'
        );
