/**
 * The command line of `mcp-prompt-gateway prompts list|get`: what to do, with which arguments, and where the prompts
 * come from (the config, in this process, or a running gateway). Pure: the environment is a parameter.
 */
import { parseArgs } from 'node:util';
import { quote } from '../../catalog/arguments.js';
import { describeError } from '../../diagnostics/logger.js';

/** Where `--url` takes its key from when `--api-key` is not given: out of the command line and the shell's history. */
export const API_KEY_VARIABLE = 'MCP_PROMPT_GATEWAY_API_KEY';

export const PROMPTS_USAGE = `Usage: mcp-prompt-gateway prompts list [--json] [--config <file>] [--from <file>]... [--client <id>]
       mcp-prompt-gateway prompts get <name> [<arg>=<value>]... [--json] [--config <file>] [--from <file>]... [--client <id>]
       mcp-prompt-gateway prompts list|get ... --url <url> [--api-key <key>]

Lists the gateway's prompts, or gets one, as an MCP client would see them. From the config, the upstreams are
started in this process (nothing listens), asked, and stopped; with --url, a running gateway is asked instead.

  list               one prompt a line: its exposed name, two spaces, its description
  get <name> [<arg>=<value>]...
                     the prompt's messages, each under a "role:" line (images, audio and resources as one line
                     naming their type and size); a value may hold "=" and spaces (quote it for your shell)
  --json             list: the merged "prompts" array (every page); get: the GetPromptResult as MCP sends it
  --config <file>    gateway config, read as the gateway reads it. Default: ./gateway.json
  --from <file>      an MCP client's config file whose servers become upstreams; repeatable
  --client <id>      answer as this configured client (or "anonymous"), its allow-list applied. Default: the
                     operator's view, every prompt the config serves (its "prompts" filters apply, no client's)
  --url <url>        ask the gateway serving MCP at this URL; its policy applies to the key sent
  --api-key <key>    with --url: the API key or token to send (Authorization: Bearer). Better: set
                     ${API_KEY_VARIABLE}, which keeps the key out of the command line and the shell's history
  --help             print this help

Text output replaces control characters (terminal escapes) with U+FFFD; --json prints the prompts as they came,
every control character escaped by JSON (\\u009b).
Warnings and errors on stderr are one line each, their control characters written as escapes (\\u001b).
The gateway's log goes to stderr, errors only unless LOG_LEVEL says otherwise (LOG_LEVEL=info); LOG_FORMAT as for the gateway.
Exit codes: 0 done; 1 the request failed (unknown prompt, missing argument, an upstream failed, the gateway at
--url unreachable or refusing the key), or list found a "required" upstream not available (what the others
serve is still printed; every upstream not available is named on stderr); 2 bad usage or bad config; 130
after Ctrl-C, 143 after SIGTERM (the upstreams stopped first).`;

/** Where the prompts come from. */
export type PromptsOrigin =
    { kind: 'config'; config: string | undefined; from: string[]; client: string | undefined } | { kind: 'gateway'; url: string; apiKey: string | undefined };

export type PromptsCommand =
    | { action: 'help' }
    | { action: 'list'; json: boolean; origin: PromptsOrigin }
    | { action: 'get'; name: string; arguments: Record<string, string>; json: boolean; origin: PromptsOrigin };

/** A command line that cannot run: exit 2, with the usage. */
export class PromptsUsageError extends Error {
    override readonly name = 'PromptsUsageError';
}

type Environment = Readonly<Record<string, string | undefined>>;

export function parsePromptsCommand(argv: readonly string[], env: Environment): PromptsCommand {
    const { values, positionals } = readFlags(argv);
    if (values.help) return { action: 'help' };
    const [action, ...rest] = positionals;
    const origin = originOf(values, env);
    switch (action) {
        case 'list':
            if (rest.length > 0) throw new PromptsUsageError(`list takes no arguments; got ${quote(rest[0]!)}`);
            return { action, json: values.json, origin };
        case 'get': {
            const [name, ...pairs] = rest;
            if (name === undefined || name === '') throw new PromptsUsageError('get needs the name of a prompt (as `prompts list` shows it)');
            return { action, name, arguments: promptArguments(pairs), json: values.json, origin };
        }
        case undefined:
            throw new PromptsUsageError('say what to do: list or get');
        default:
            throw new PromptsUsageError(`unknown action ${quote(action)}; use list or get`);
    }
}

function readFlags(argv: readonly string[]) {
    try {
        return parseArgs({
            args: [...argv],
            strict: true,
            allowPositionals: true,
            options: {
                config: { type: 'string', short: 'c' },
                from: { type: 'string', multiple: true, default: [] },
                client: { type: 'string' },
                url: { type: 'string' },
                'api-key': { type: 'string' },
                json: { type: 'boolean', default: false },
                help: { type: 'boolean', short: 'h', default: false }
            }
        });
    } catch (error) {
        throw new PromptsUsageError(describeError(error));
    }
}

type Flags = ReturnType<typeof readFlags>['values'];

function originOf(values: Flags, env: Environment): PromptsOrigin {
    if (values.url === undefined) {
        if (values['api-key'] !== undefined) throw new PromptsUsageError('--api-key goes with --url: the config in this process needs no key');
        if (values.client === '') throw new PromptsUsageError('--client must not be empty');
        return { kind: 'config', config: values.config, from: values.from, client: values.client };
    }
    const local = (['config', 'from', 'client'] as const).filter(flag => (flag === 'from' ? values.from.length > 0 : values[flag] !== undefined));
    if (local.length > 0) {
        throw new PromptsUsageError(`--${local[0]} is for the config in this process; with --url the gateway's own config and policy apply`);
    }
    if (values['api-key'] === '') throw new PromptsUsageError(`--api-key must not be empty; leave it out to send no key (or set ${API_KEY_VARIABLE})`);
    const fromEnv = env[API_KEY_VARIABLE];
    return { kind: 'gateway', url: gatewayUrl(values.url), apiKey: values['api-key'] ?? (fromEnv === '' ? undefined : fromEnv) };
}

function gatewayUrl(text: string): string {
    let url: URL | undefined;
    try {
        url = new URL(text);
    } catch {
        url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        throw new PromptsUsageError("--url must be the http:// or https:// URL of a gateway's MCP endpoint, e.g. http://127.0.0.1:8080/mcp");
    }
    return text;
}

/** `name=value` pairs, split at the first "=" (a value may hold more); a name given twice is an error, not a choice. */
export function promptArguments(pairs: readonly string[]): Record<string, string> {
    const values = new Map<string, string>();
    for (const pair of pairs) {
        const split = pair.indexOf('=');
        if (split <= 0) throw new PromptsUsageError(`${quote(pair)} is not <arg>=<value>; give each argument as name=value`);
        const name = pair.slice(0, split);
        if (values.has(name)) throw new PromptsUsageError(`argument ${quote(name)} is given twice; give it once`);
        values.set(name, pair.slice(split + 1));
    }
    // Own data properties, whatever the name ("__proto__" included): the prompt decides which names it takes.
    return Object.fromEntries(values);
}
