/**
 * The gateway as users run it: the built CLI (`dist/cli.js` of the tree under test, by default this one; see
 * `measureGatewayAt`) in a process of its own, from a config file. The bench talks to it only through its CLI, its
 * config and HTTP, so the same harness measures any build of it. The bench lifts the per-client quotas (one bench client opens thousands of sessions
 * and sends thousands of requests a second: the limits would measure themselves) and keeps every other default.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, spawnWatched, type Watched } from './processes.js';

let gatewayRoot = ROOT;

/** Measures the gateway built in another checkout (its dist/cli.js: build it there first). */
export function measureGatewayAt(root: string): void {
    const resolved = path.resolve(root);
    if (!existsSync(path.join(resolved, 'dist/cli.js'))) throw new Error(`no dist/cli.js in ${resolved}: run \`npm run build\` there first`);
    gatewayRoot = resolved;
}

/** The tree under test and its commit (with "+changes" when its work tree differs from it). */
export function gatewayUnderTest(root = gatewayRoot): { root: string; commit: string } {
    const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();
    try {
        const dirty = git('status', '--porcelain', '--untracked-files=no', '--', 'src') !== '';
        return { root, commit: `${git('rev-parse', '--short', 'HEAD')}${dirty ? '+changes' : ''}` };
    } catch {
        return { root, commit: 'unknown' };
    }
}

const BENCH_LIMITS = { rateLimit: { requestsPerSecond: 0 }, maxSessionsPerClient: 1_000_000 };

export interface GatewayProcess extends Watched {
    url: string;
    /** The inspector's WebSocket URL, when started with `inspect`. */
    inspector: string | undefined;
    /** Milliseconds from spawn until it printed "listening on". */
    startedInMs: number;
    /** `performance.now()` when it was spawned. */
    spawnedAt: number;
}

export interface StartOptions {
    /** Start with the inspector on a free port (for heap measures after a full GC and CPU profiles). */
    inspect?: boolean;
    root?: string;
    readyTimeoutMs?: number;
    /** Environment variables on top of the bench's own (e.g. the standard OTEL_* ones). */
    env?: Record<string, string>;
}

export async function startGateway(name: string, config: Record<string, unknown>, options: StartOptions = {}): Promise<GatewayProcess> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-'));
    const file = path.join(dir, 'gateway.json');
    const limits = { ...BENCH_LIMITS, ...(config.limits as object | undefined) };
    const sessions = { max: 1_000_000, ...(config.sessions as object | undefined) };
    await writeFile(file, JSON.stringify({ ...config, limits, sessions, listen: { port: 0 } }));
    const root = options.root ?? gatewayRoot;
    const started = performance.now();
    const watched = await spawnWatched(name, process.execPath, [...(options.inspect === true ? ['--inspect=127.0.0.1:0'] : []), path.join(root, 'dist/cli.js'), '--config', file], {
        ready: /^listening on (\S+)$/,
        ...(options.env === undefined ? {} : { env: options.env }),
        readyTimeoutMs: options.readyTimeoutMs ?? 120_000
    });
    const startedInMs = performance.now() - started;
    const inspector = watched
        .tail()
        .map(line => /^Debugger listening on (ws:\S+)$/.exec(line)?.[1])
        .find(url => url !== undefined);
    if (options.inspect === true && inspector === undefined) throw new Error(`${name}: no inspector URL in its output`);
    return { ...watched, url: watched.readyMatch[1]!, inspector, startedInMs, spawnedAt: started };
}

/** A Streamable HTTP upstream entry; the bench's bulkhead is wide enough that the load, not the bulkhead, is measured. */
export function httpUpstream(id: string, url: string, extra: Record<string, unknown> = {}) {
    return { id, transport: 'streamable-http', url, maxConcurrency: 256, ...extra };
}
