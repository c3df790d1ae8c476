/**
 * Generates config/gateway.schema.json (the editor JSON Schema for gateway config
 * files) from the zod schema in src/config/schema.ts.
 *
 *   npm run schema              # write config/gateway.schema.json
 *   npm run schema -- --check   # exit 1 if the committed file is out of date (CI)
 *
 * The JSON Schema describes the *input* side (io: 'input'): fields with defaults
 * are optional. It is a description for editors, not the validator: the gateway
 * validates with zod, after `${VAR}` interpolation. What JSON Schema cannot say is
 * left out: the cross-field checks of the superRefine (unique upstream ids, ids
 * without the separator, cursorSecret length, maxDelayMs >= debounceMs) and the
 * The one deliberate change to zod's output: an upstream `url` (z.url with a
 * protocol) becomes a `pattern` instead of `format: "uri"`. zod emits only the
 * format, which loses the http/https restriction and also rejects the raw
 * `"${UPSTREAM_URL}"` or `"http://${HOST}/mcp"` a config file may hold
 * (braces are not URI characters), although the gateway accepts them.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { GatewayConfigSchema } from '../src/config/schema.js';

const OUTPUT = fileURLToPath(new URL('../config/gateway.schema.json', import.meta.url));
const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url));

export function generateSchema(): string {
    const manifest = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { name: string };
    const generated = z.toJSONSchema(GatewayConfigSchema, {
        target: 'draft-2020-12',
        io: 'input',
        unrepresentable: 'throw',
        reused: 'inline',
        cycles: 'throw',
        override: ({ zodSchema, jsonSchema }) => {
            if (!(zodSchema instanceof z.core.$ZodURL)) return;
            const protocol = zodSchema._zod.def.protocol;
            if (protocol === undefined) return;
            // /^https?$/ -> ^(?:(?:https?)://|\$\{): a URL of an allowed scheme, or a placeholder.
            const scheme = protocol.source.replace(/^\^/, '').replace(/\$$/, '');
            delete jsonSchema.format;
            jsonSchema.pattern = `^(?:(?:${scheme})://|\\$\\{)`;
        }
    });
    const { $schema, ...rest } = generated;
    const document = {
        $schema,
        // The path npm publishes it at (package.json "files" includes config/).
        $id: `https://unpkg.com/${manifest.name}/config/gateway.schema.json`,
        title: 'MCP prompt gateway configuration',
        description:
            `Configuration file of ${manifest.name}. Generated from src/config/schema.ts by scripts/generate-schema.ts; do not edit. ` +
            'String values may contain ${VAR} or ${VAR:-default} placeholders, replaced from the environment before validation. ' +
            'The gateway checks more than this schema can express: unique upstream ids, ids not containing namespace.separator, ' +
            'cursorSecret empty or at least 16 characters, notifications.maxDelayMs >= notifications.debounceMs.',
        // VS Code's JSON editor reads these two (they are not JSON Schema): the gateway accepts both in its config files,
        // and the starter config that `init` writes has comments, which VS Code would otherwise mark as errors.
        allowComments: true,
        allowTrailingCommas: true,
        ...rest
    };
    return `${JSON.stringify(document, null, 2)}\n`;
}

function main(): number {
    const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
    const expected = generateSchema();
    const shown = relative(process.cwd(), OUTPUT) || OUTPUT;

    if (values.check) {
        let current: string | undefined;
        try {
            current = readFileSync(OUTPUT, 'utf8');
        } catch {
            current = undefined;
        }
        if (current !== expected) {
            console.error(`${shown} is ${current === undefined ? 'missing' : 'out of date'}: ` + 'run `npm run schema` and commit the result.');
            return 1;
        }
        console.log(`${shown} is up to date.`);
        return 0;
    }

    mkdirSync(dirname(OUTPUT), { recursive: true });
    writeFileSync(OUTPUT, expected);
    console.log(shown);
    return 0;
}

process.exitCode = main();
