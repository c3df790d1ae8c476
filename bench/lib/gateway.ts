/**
 * The gateway as users run it: the built CLI (`dist/cli.js` of GATEWAY_ROOT, by default this tree) in a process of
 * its own, from a config file. The bench lifts the per-client quotas (one bench client opens thousands of sessions
 * and sends thousands of requests a second: the limits would measure themselves) and keeps every other default.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, spawnWatched, type Watched } from './processes.js';

/** Which build is measured: GATEWAY_ROOT=/other/checkout measures that one's dist/cli.js (build it there first). */
export const GATEWAY_ROOT = process.env.GATEWAY_ROOT ?? ROOT;

export const BENCH_LIMITS = { rateLimit: { requestsPerSecond: 0 }, maxSessionsPerClient: 1_000_000 };

export interface GatewayProcess extends Watched {
    url: string;
    /** The inspector's WebSocket URL, when started with `inspect`. */
    inspector: string | undefined;
    /** Milliseconds from spawn until it printed "listening on". */
    startedInMs: number;
}

export interface StartOptions {
    /** Start with the inspector on a free port (for heap measures after a full GC and CPU profiles). */
    inspect?: boolean;
    root?: string;
    readyTimeoutMs?: number;
}

export async function startGateway(name: string, config: Record<string, unknown>, options: StartOptions = {}): Promise<GatewayProcess> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-'));
    const file = path.join(dir, 'gateway.json');
    const limits = { ...BENCH_LIMITS, ...(config.limits as object | undefined) };
    const sessions = { max: 1_000_000, ...(config.sessions as object | undefined) };
    await writeFile(file, JSON.stringify({ ...config, limits, sessions, listen: { port: 0 } }));
    const root = options.root ?? GATEWAY_ROOT;
    const started = performance.now();
    const watched = await spawnWatched(
        name,
        process.execPath,
        [...(options.inspect === true ? ['--inspect=127.0.0.1:0'] : []), path.join(root, 'dist/cli.js'), '--config', file],
        { ready: /^listening on (\S+)$/, readyTimeoutMs: options.readyTimeoutMs ?? 120_000 }
    );
    const startedInMs = performance.now() - started;
    const inspector = watched
        .tail()
        .map(line => /^Debugger listening on (ws:\S+)$/.exec(line)?.[1])
        .find(url => url !== undefined);
    if (options.inspect === true && inspector === undefined) throw new Error(`${name}: no inspector URL in its output`);
    return { ...watched, url: watched.readyMatch[1]!, inspector, startedInMs };
}

/** A Streamable HTTP upstream entry; the bench's bulkhead is wide enough that the load, not the bulkhead, is measured. */
export function httpUpstream(id: string, url: string, extra: Record<string, unknown> = {}) {
    return { id, transport: 'streamable-http', url, maxConcurrency: 256, ...extra };
}
