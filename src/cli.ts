#!/usr/bin/env node
/**
 * mcp-prompt-gateway [--config <file>] [--from <client config>]... [--stdio [--client ID]] [--host H] [--port P] [--check]
 * mcp-prompt-gateway init [--output <file>] [--force]
 * mcp-prompt-gateway prompts list|get ... (see src/setup/prompts-command/)
 * Exit codes: 0 done, 1 runtime failure, 2 bad usage or bad config.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ImportNote } from './config/client-config/import.js';
import { loadGatewayConfig } from './config/load.js';
import { ConfigError } from './config/issues.js';
import { ConfigReloader } from './config/reload.js';
import { missingResource } from './config/oauth-schema.js';
import { ANONYMOUS_CLIENT_ID } from './config/policy-schema.js';
import { missingCursorSecret, type FilesUpstreamConfig, type GatewayConfig } from './config/schema.js';
import { configSecrets } from './config/secrets.js';
import { startGateway } from './gateway.js';
import { defaultConfigFile } from './setup/default-config.js';
import { runInit } from './setup/init.js';
import { runPrompts } from './setup/prompts-command/run.js';
import { resolveCommand } from './upstream/command.js';
import { checkPromptFolder } from './upstream/files/check-folder.js';
import { staleNameNotes } from './upstream/files/stale-names.js';
import { closeSharedReaper } from './upstream/reaper.js';
import { childEnvironment } from './upstream/transports.js';
import { afterLogFlushed, createLogger, flushLogSync, describeError, logSettingsFrom, type Logger } from './diagnostics/logger.js';
import { Redactor } from './diagnostics/redaction.js';
import { VERSION } from './version.js';
import { tracingSettings } from './observability/tracing.js';

const USAGE = `Usage: mcp-prompt-gateway [--config <file>] [--from <file>]... [--stdio [--client ID]] [--host H] [--port P] [--check]
       mcp-prompt-gateway init [--output <file>] [--force]
       mcp-prompt-gateway prompts list|get [<name> [<arg>=<value>]...] [--json] [--config <file>] [--url <url>]

  init             write a commented starter gateway.json and a prompts folder with an example prompt, and
                   print how to start it and connect clients (mcp-prompt-gateway init --help for more)
  prompts          list the prompts, or get one, from the config (started in this process, nothing listens)
                   or from a running gateway (--url); mcp-prompt-gateway prompts --help for more
  --config <file>  gateway config (JSON, comments allowed); see README.md. Default: ./gateway.json
  --from <file>    an MCP client's config file (Claude Desktop, Cursor, Claude Code, VS Code) whose servers
                   become upstreams; repeatable; without --config, with default settings (docs/client-configs.md)
  --stdio          serve MCP on stdin/stdout instead of HTTP (logs go to stderr)
  --client <id>    with --stdio: the configured client whose prompt policy applies (default: anonymous)
  --host <host>    override listen.host
  --port <port>    override listen.port
  --check          validate the config and read every files upstream's prompt files as the gateway would;
                   exit 0 valid (warnings printed), 2 invalid or a prompt file with an error (file:line)
  --version        print the version
  --help           print this help`;

class UsageError extends Error {}

function parseCommandLine(argv: string[]) {
    try {
        return parseArgs({
            args: argv,
            strict: true,
            allowPositionals: false,
            options: {
                config: { type: 'string', short: 'c' },
                from: { type: 'string', multiple: true },
                stdio: { type: 'boolean', default: false },
                client: { type: 'string' },
                host: { type: 'string' },
                port: { type: 'string' },
                check: { type: 'boolean', default: false },
                version: { type: 'boolean', default: false },
                help: { type: 'boolean', short: 'h', default: false }
            }
        }).values;
    } catch (error) {
        throw new UsageError(describeError(error));
    }
}

function applyOverrides(config: GatewayConfig, source: string, host: string | undefined, port: string | undefined): GatewayConfig {
    const listen = { ...config.listen };
    if (host !== undefined) {
        if (host === '') throw new UsageError('--host must not be empty');
        listen.host = host;
    }
    if (port !== undefined) {
        const value = Number(port);
        if (!/^\d+$/.test(port) || value > 65_535) throw new UsageError(`--port must be a whole number from 0 to 65535, got "${port}"`);
        listen.port = value;
    }
    const overridden = { ...config, listen };
    const issues = [
        { path: ['cursorSecret'], message: missingCursorSecret(overridden) },
        { path: ['auth', 'resource'], message: missingResource(overridden) }
    ].filter((issue): issue is { path: string[]; message: string } => issue.message !== undefined);
    if (issues.length > 0) throw new ConfigError(`${source} with --host ${listen.host}`, issues);
    return overridden;
}

/** The log, once there is one: what the CLI prints on its way out comes after the log's buffered lines. */
let log: Logger | undefined;

/** What the CLI itself prints on stderr hides the secrets of the config last loaded, as the log does. */
const printed = new Redactor();

function print(text: string): void {
    process.stderr.write(printed.redact(text));
}

type CommandLine = ReturnType<typeof parseCommandLine>;

async function main(argv: string[]): Promise<number> {
    if (argv[0] === 'init') return runInit(argv.slice(1), fileURLToPath(import.meta.url));
    if (argv[0] === 'prompts') return runPrompts(argv.slice(1));
    const args = parseCommandLine(argv);
    if (args.help) {
        process.stdout.write(`${USAGE}\n`);
        return 0;
    }
    if (args.version) {
        process.stdout.write(`${VERSION}\n`);
        return 0;
    }
    const from = args.from ?? [];
    // --from alone runs with default settings; with neither, ./gateway.json (as init writes it).
    const file = args.config ?? (from.length > 0 ? undefined : defaultConfigFile(process.cwd(), text => process.stderr.write(text)));
    if (file === undefined && from.length === 0) return 2;
    const loader = configLoader(args, file, from);
    const files = new Set<string>();
    const config = await loader.load(files);
    checkClientArgument(args, config);
    // The OTEL_* environment is the config's too: a value that cannot be used fails here as at start (exit 2).
    tracingSettings(config.tracing, process.env);
    if (args.check) {
        for (const warning of commandWarnings(config, loader.origins)) print(`warning: ${warning}\n`);
        const failed = await checkPromptFolders(config);
        if (failed > 0) {
            print(`config ${loader.source}: ${failed} prompt file error(s) above; fix them (the gateway serves the other files and leaves these out)\n`);
            return 2;
        }
        print(`config ${loader.source} is valid (${config.upstreams.length} upstream(s))\n`);
        return 0;
    }
    const logger = (log = loggerFromEnvironment(config));
    loader.report = notes => notes.forEach(note => logger[note.level === 'warning' ? 'warn' : 'info'](note.message));
    await serve(args, config, { load: loader.load, files: [...files], logger });
    return 0;
}

interface ConfigLoader {
    /** `--config <file>`, or the --from files. */
    source: string;
    /** Where each upstream came from, as of the last load. */
    origins: ReadonlyMap<string, string>;
    /** Where the notes about the config (client config files, names that changed) go: stderr until the logger exists, then the log (at each reload). */
    report: (notes: ImportNote[]) => void;
    load: (touched?: Set<string>) => Promise<GatewayConfig>;
}

function configLoader(args: CommandLine, file: string | undefined, from: string[]): ConfigLoader {
    const loader: ConfigLoader = {
        source: file ?? `--from ${from.join(' ')}`,
        origins: new Map(),
        report: notes => notes.forEach(note => print(`${note.level}: ${note.message}\n`)),
        load: async touched => {
            const loaded = await loadGatewayConfig({ file, from }, process.env, touched);
            // Before the notes are reported: the log's secrets are still those of the running config.
            printed.update(configSecrets(loaded.config));
            const notes = [...loaded.notes, ...staleNameNotes(loaded.config)];
            loader.report(notes.map(note => ({ ...note, message: printed.redact(note.message) })));
            loader.origins = loaded.origins;
            return applyOverrides(loaded.config, loader.source, args.host, args.port);
        }
    };
    return loader;
}

/**
 * Every `files` upstream's folder read as the gateway reads it: each problem printed as `file:line: message`
 * (the path as given from here, so a CI log points at it), warnings too; how many fail the check.
 */
async function checkPromptFolders(config: GatewayConfig): Promise<number> {
    let failed = 0;
    for (const upstream of config.upstreams.filter((upstream): upstream is FilesUpstreamConfig => upstream.transport === 'files')) {
        const checked = await checkPromptFolder(upstream, config.limits);
        const where = `upstream "${upstream.id}"`;
        if (!checked.ok) {
            print(`error: ${where}: ${checked.reason}\n`);
            failed++;
            continue;
        }
        for (const problem of checked.problems) {
            const file = `${shownPath(path.join(upstream.path, problem.source))}${problem.line === undefined ? '' : `:${problem.line}`}`;
            print(`${problem.warning === true ? 'warning' : 'error'}: ${file}: ${problem.message} (${where})\n`);
            if (problem.warning !== true) failed++;
        }
        if (checked.truncated)
            print(`warning: ${where}: more prompt files than limits.maxPromptsPerUpstream (${config.limits.maxPromptsPerUpstream}); the rest would be left out\n`);
        print(`${where}: ${checked.prompts} prompt(s) from ${shownPath(upstream.path)} (${upstream.format})\n`);
    }
    return failed;
}

/** Relative to the working directory when below it (as a CI log shows paths), else absolute. */
function shownPath(absolute: string): string {
    const relative = path.relative(process.cwd(), absolute);
    return relative === '' ? '.' : relative.startsWith('..') || path.isAbsolute(relative) ? absolute : relative;
}

function checkClientArgument(args: CommandLine, config: GatewayConfig): void {
    if (args.client === undefined) return;
    if (!args.stdio) throw new UsageError('--client applies to --stdio only; HTTP callers are identified by their credentials');
    if (args.client !== ANONYMOUS_CLIENT_ID && !config.clients.some(client => client.id === args.client)) {
        throw new UsageError(`--client "${args.client}" is not in the config's "clients"; use one of their ids or "${ANONYMOUS_CLIENT_ID}"`);
    }
}

/** LOG_LEVEL and LOG_FORMAT, where set, over the config's log settings. */
function loggerFromEnvironment(config: GatewayConfig): Logger {
    const settings = logSettingsFrom(process.env, config.log);
    if (!settings.ok) throw new UsageError(settings.message);
    return createLogger({ level: settings.level, format: settings.format });
}

/** Runs the gateway until a signal or (stdio) the client ends it; the config files are watched meanwhile. */
async function serve(args: CommandLine, config: GatewayConfig, { load, files, logger }: { load: ConfigLoader['load']; files: string[]; logger: Logger }): Promise<void> {
    const signals = new SignalHandlers(logger);
    const gateway = await startGateway(config, { logger, stdio: args.stdio, ...(args.client === undefined ? {} : { client: args.client }) });
    // The gateway's own addresses, from listen settings, never from a secret; scripts read these lines as they are.
    if (gateway.url !== undefined) process.stderr.write(`listening on ${gateway.url}\n`);
    for (const [what, url] of Object.entries(gateway.operatorUrls)) process.stderr.write(`${what} at ${url}\n`);
    if (gateway.catalogUrl !== undefined) process.stderr.write(`catalog at ${gateway.catalogUrl}\n`);
    for (const notice of gateway.notices) print(`${notice}\n`);

    const reloader = new ConfigReloader({ files, load, apply: async next => ({ ...(await gateway.reload(next)) }), current: config, logger });
    reloader.start();

    let stopping = false;
    const stop = async (reason: string) => {
        if (stopping) return;
        stopping = true;
        reloader.close();
        logger.info({ reason }, 'shutting down');
        let code = 0;
        try {
            await gateway.close();
            // Every child is stopped by now; this only ends the watchdog that would have stopped them had we died.
            await closeSharedReaper();
        } catch (error) {
            logger.error({ err: describeError(error) }, 'shutdown failed');
            code = 1;
        }
        afterLogFlushed(logger, () => process.exit(code));
    };
    signals.ready({ reload: () => void reloader.reload('SIGHUP'), stop: reason => void stop(reason) });
    await gateway.done;
    await stop('stdin closed');
}

/** A stdio upstream whose program is not here yet may still be where the gateway will run: a warning, not an error. */
function commandWarnings(config: GatewayConfig, origins: ReadonlyMap<string, string>): string[] {
    return config.upstreams.flatMap((upstream, index) => {
        if (upstream.transport !== 'stdio') return [];
        const resolution = resolveCommand({ command: upstream.command, cwd: upstream.cwd, env: childEnvironment(upstream) });
        if (resolution.ok) return [];
        return [
            `${origins.get(upstream.id) ?? `upstreams[${index}]`}.${resolution.field}: ${resolution.problem}; ${resolution.fix}. (The config is valid: the command may exist where the gateway will run.)`
        ];
    });
}

/**
 * Signal handling from before start-up: SIGHUP's default action would kill the process, and a stop asked for
 * while upstreams are still connecting must be graceful too. What arrives early is done once the gateway runs.
 * A second SIGINT or SIGTERM while stopping exits at once (the watchdog still stops the children); one that comes
 * within DUPLICATE_SIGNAL_MS of the first is the same request delivered twice: Ctrl-C under `npm start` reaches the
 * gateway from the terminal and again forwarded by npm, as does a supervisor's SIGTERM to the whole process group.
 */
const DUPLICATE_SIGNAL_MS = 1000;

class SignalHandlers {
    #reload: (() => void) | undefined;
    #stop: ((reason: string) => void) | undefined;
    #reloadAsked = false;
    #stopAsked: string | undefined;
    #stopAskedAt = 0;

    constructor(private readonly logger: Logger) {
        process.on('SIGHUP', () => {
            if (this.#stopAsked !== undefined) return;
            if (this.#reload === undefined) this.#reloadAsked = true;
            else this.#reload();
        });
        for (const signal of ['SIGINT', 'SIGTERM'] as const) {
            process.on(signal, () => {
                if (this.#stopAsked !== undefined) {
                    if (performance.now() - this.#stopAskedAt < DUPLICATE_SIGNAL_MS) return;
                    this.logger.warn({ signal }, 'second stop signal: exiting at once');
                    afterLogFlushed(this.logger, () => process.exit(1), 500);
                    return;
                }
                this.#stopAsked = signal;
                this.#stopAskedAt = performance.now();
                if (this.#stop === undefined) this.logger.info({ signal }, 'stopping as soon as start-up is done');
                else this.#stop(signal);
            });
        }
    }

    ready(handlers: { reload: () => void; stop: (reason: string) => void }): void {
        this.#reload = handlers.reload;
        this.#stop = handlers.stop;
        if (this.#stopAsked !== undefined) handlers.stop(this.#stopAsked);
        else if (this.#reloadAsked) handlers.reload();
    }
}

main(process.argv.slice(2)).then(
    code => {
        process.exitCode = code;
    },
    (error: unknown) => {
        // The lines the log holds first: the message comes after them.
        if (log !== undefined) flushLogSync(log);
        if (error instanceof ConfigError || error instanceof UsageError) {
            process.stderr.write(`${error.message}\n${error instanceof UsageError ? `\n${USAGE}\n` : ''}`);
            process.exitCode = 2;
            return;
        }
        print(`mcp-prompt-gateway: ${describeError(error)}\n`);
        // Exit now: whatever failed may have left handles open that would keep the process alive.
        process.exit(1);
    }
);
