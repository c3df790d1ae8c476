/**
 * `mcp-prompt-gateway prompts list|get`: the gateway's prompts on the command line, for authors trying a prompt and
 * scripts using one. Output on stdout; warnings and errors on stderr, one line each, with the config's secrets
 * redacted. Exit codes: 0 done, 1 the request failed, 2 bad usage or bad config (see PROMPTS_USAGE).
 */
import { constants } from 'node:os';
import { ProtocolError, type GetPromptResult } from '@modelcontextprotocol/client';
import { quote } from '../../catalog/arguments.js';
import { isInputRequired, type InputRequired } from '../../catalog/upstream-port.js';
import { CODE } from '../../protocol/errors.js';
import { UnknownPromptError } from '../../catalog/usage.js';
import { ConfigError } from '../../config/issues.js';
import { loadGatewayConfig } from '../../config/load.js';
import { ANONYMOUS_CLIENT_ID } from '../../config/policy-schema.js';
import type { GatewayConfig } from '../../config/schema.js';
import { configSecrets } from '../../config/secrets.js';
import { createLogger, describeError, logSettingsFrom, type Logger } from '../../diagnostics/logger.js';
import { Redactor } from '../../diagnostics/redaction.js';
import { oneLine } from '../../lib/one-line.js';
import { staleNameNotes } from '../../upstream/files/stale-names.js';
import type { GatewayUpstream } from '../../upstream/upstream.js';
import { defaultConfigFile } from '../default-config.js';
import { API_KEY_VARIABLE, parsePromptsCommand, PROMPTS_USAGE, PromptsUsageError, type PromptsCommand, type PromptsOrigin } from './command-line.js';
import { gatewayConfig, PromptSource } from './prompt-source.js';
import { jsonText, messagesText, promptLines } from './render.js';

const PREFIX = 'mcp-prompt-gateway prompts';

/** A prompt that asks its user something first (elicitation) needs an MCP client to ask it. */
const NO_INPUT = "the command line cannot answer a prompt's questions; get it from an MCP client that can (elicitation)";

type Action = Exclude<PromptsCommand, { action: 'help' }>;

/** Returns the exit code; never throws. */
export async function runPrompts(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
    const redactor = new Redactor();
    try {
        const command = parsePromptsCommand(argv, env);
        if (command.action === 'help') {
            await writeOut(`${PROMPTS_USAGE}\n`);
            return 0;
        }
        const config = await configOf(command.origin, env, redactor);
        if (config === undefined) return 2;
        redactor.update(configSecrets(config));
        const logger = commandLogger(config, env);
        const client = command.origin.kind === 'config' ? command.origin.client : undefined;
        return await withSource(new PromptSource(config, logger, client), source => run(source, command, redactor));
    } catch (error) {
        return failed(error, redactor);
    }
}

async function configOf(origin: PromptsOrigin, env: NodeJS.ProcessEnv, redactor: Redactor): Promise<GatewayConfig | undefined> {
    if (origin.kind === 'gateway') return gatewayConfig(origin.url, origin.apiKey, env);
    const { from, client } = origin;
    // As the gateway finds its config: --config, else --from alone, else ./gateway.json.
    const file = origin.config ?? (from.length > 0 ? undefined : defaultConfigFile(process.cwd(), text => process.stderr.write(text)));
    if (file === undefined && from.length === 0) return undefined;
    const loaded = await loadGatewayConfig({ file, from }, env);
    redactor.update(configSecrets(loaded.config));
    // As the gateway warns at its start: names of prompt files written as they were before (stale-names.ts) among them.
    for (const note of [...loaded.notes, ...staleNameNotes(loaded.config)]) if (note.level === 'warning') warn(redactor, `warning: ${note.message}`);
    if (client !== undefined && client !== ANONYMOUS_CLIENT_ID && !loaded.config.clients.some(known => known.id === client)) {
        throw new PromptsUsageError(`--client ${quote(client)} is not in the config's "clients"; use one of their ids or "${ANONYMOUS_CLIENT_ID}"`);
    }
    return loaded.config;
}

/** Errors only, unless LOG_LEVEL asks for more: the upstreams' own chatter would bury the answer. LOG_FORMAT as the gateway reads it. */
function commandLogger(config: GatewayConfig, env: NodeJS.ProcessEnv): Logger {
    const settings = logSettingsFrom(env, { level: 'error', format: config.log.format });
    if (!settings.ok) throw new PromptsUsageError(settings.message);
    return createLogger({ level: settings.level, format: settings.format, secrets: configSecrets(config) });
}

/**
 * Connects, runs, and stops every upstream whatever happens. SIGINT and SIGTERM stop them too, and exit as a shell
 * reports a command ended by that signal (128 + its number: 130 for Ctrl-C).
 */
async function withSource(source: PromptSource, use: (source: PromptSource) => Promise<number>): Promise<number> {
    let interrupted: number | undefined;
    const stop = (signal: 'SIGINT' | 'SIGTERM') => {
        interrupted = 128 + constants.signals[signal];
        const code = interrupted;
        void source.close().finally(() => process.exit(code));
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
    try {
        await source.connect();
        return await use(source);
    } catch (error) {
        if (interrupted !== undefined) return interrupted;
        throw error;
    } finally {
        process.off('SIGINT', stop).off('SIGTERM', stop);
        await source.close();
    }
}

async function run(source: PromptSource, command: Action, redactor: Redactor): Promise<number> {
    if (command.origin.kind === 'gateway') {
        const unreachable = gatewayProblem(source, command.origin.url);
        if (unreachable !== undefined) {
            warn(redactor, `${PREFIX}: ${unreachable}`);
            return 1;
        }
    }
    return command.action === 'list' ? list(source, command.json, redactor) : get(source, command, redactor);
}

/** What is listed is what answered; each upstream not available is named, and a required one fails the command. */
async function list(source: PromptSource, json: boolean, redactor: Redactor): Promise<number> {
    let requiredDown = false;
    for (const upstream of source.upstreams) {
        if (upstream.state === 'ready') {
            if (upstream.lastError !== undefined) warn(redactor, `warning: upstream "${upstream.id}": ${upstream.lastError}; \`mcp-prompt-gateway --check\` names every problem`);
            continue;
        }
        requiredDown ||= upstream.config.required;
        const kind = upstream.config.required ? 'error: required' : 'warning:';
        warn(redactor, `${kind} upstream "${upstream.id}" is not available (${failureOf(upstream)}); its prompts are not listed`);
    }
    const prompts = await source.list();
    await writeOut(json ? jsonText(prompts) : promptLines(prompts));
    return requiredDown ? 1 : 0;
}

async function get(source: PromptSource, command: Extract<Action, { action: 'get' }>, redactor: Redactor): Promise<number> {
    let result: GetPromptResult | InputRequired;
    try {
        result = await source.get(command.name, command.arguments);
    } catch (error) {
        warn(redactor, `${PREFIX} get: ${error instanceof ProtocolError ? error.message : describeError(error)}`);
        if (error instanceof ProtocolError && error.code === CODE.missingClientCapability) warn(redactor, `note: ${NO_INPUT}`);
        const down = source.upstreams.filter(upstream => upstream.state !== 'ready').map(upstream => `"${upstream.id}"`);
        if (error instanceof UnknownPromptError && down.length > 0) warn(redactor, `note: not available, so not asked: upstream ${down.join(', ')}`);
        return 1;
    }
    if (isInputRequired(result)) {
        warn(redactor, `${PREFIX} get: prompt ${quote(command.name)} asks for more input (an input_required result); ${NO_INPUT}`);
        return 1;
    }
    await writeOut(command.json ? jsonText(result) : messagesText(result.messages));
    return 0;
}

/** Why the gateway at `url` did not answer, if it did not; a refused key says where a key comes from. */
function gatewayProblem(source: PromptSource, url: string): string | undefined {
    const [gateway] = source.upstreams;
    if (gateway === undefined || gateway.state === 'ready') return undefined;
    const reason = failureOf(gateway);
    const refused = /\bHTTP 40[13]\b/.test(reason) ? `; the gateway refused the key or wants one: pass --api-key, or set ${API_KEY_VARIABLE}` : '';
    return `the gateway at ${url} did not answer (${reason})${refused}`;
}

/** Why an upstream is not available, without the "Upstream <id> failed: " its error starts with (the line names it). */
function failureOf(upstream: GatewayUpstream): string {
    return (upstream.lastError ?? upstream.state).replace(`Upstream ${upstream.id} failed: `, '');
}

function failed(error: unknown, redactor: Redactor): number {
    if (error instanceof PromptsUsageError) {
        process.stderr.write(`${PREFIX}: ${error.message}\n\n${PROMPTS_USAGE}\n`);
        return 2;
    }
    if (error instanceof ConfigError) {
        process.stderr.write(`${error.message}\n`);
        return 2;
    }
    warn(redactor, `${PREFIX}: ${describeError(error)}`);
    return 1;
}

/**
 * One line each, whatever it quotes: an upstream's error message, a file's name. Their control characters (terminal
 * escapes, a line feed forging a line of its own) are written as escapes; redacted first, so a secret is found as it is.
 */
function warn(redactor: Redactor, line: string): void {
    process.stderr.write(`${oneLine(redactor.redact(line))}\n`);
}

let readerGoneHandled = false;

/** Resolves once written; a reader gone (`| head`) is not an error of this command. */
function writeOut(text: string): Promise<void> {
    if (!readerGoneHandled) {
        readerGoneHandled = true;
        process.stdout.on('error', () => {});
    }
    return new Promise(resolve => process.stdout.write(text, () => resolve()));
}
