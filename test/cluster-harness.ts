/**
 * Real processes for the multi-replica tests: redis-server, nginx round-robin in front of several gateway replicas
 * (the built CLI), each on a loopback port with its own files in a temporary folder, each stopped when the test
 * ends. Redis and nginx come from Debian; tests skip with CLUSTER_SKIP_MESSAGE where they are missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { closeAfter, freePort, ROOT, waitFor, type TeardownScope } from './helpers.js';

export const CLUSTER_INSTALL_COMMAND = 'apt-get install -y redis-server nginx-light';
export const CLUSTER_SKIP_MESSAGE = `needs redis-server and nginx (Debian: ${CLUSTER_INSTALL_COMMAND})`;

const CLI = path.join(ROOT, 'dist/cli.js');
/** Bounds a start on a loaded machine; a start that works costs only its own time. */
const START_DEADLINE_MS = 60_000;
/** How long a process gets to stop on its polite signal before it is killed: above the gateway's default shutdownTimeoutMs (10 s) of draining. */
const STOP_GRACE_MS = 20_000;
/** Lines of redis's and nginx's output kept to explain a failed start (a replica's are all kept: tests read its logs). */
const KEPT_LINES = 200;

/** The executable's path: PATH first, then /usr/sbin and /usr/bin (nginx is in /usr/sbin, outside a user's PATH on Debian). */
function findExecutable(name: string): string | undefined {
    const folders = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/sbin', '/usr/bin'];
    for (const folder of folders) {
        const candidate = path.join(folder, name);
        try {
            accessSync(candidate, constants.X_OK);
            return candidate;
        } catch {
            // Not here; try the next folder.
        }
    }
    return undefined;
}

export const redisAvailable = (): boolean => findExecutable('redis-server') !== undefined;
export const nginxAvailable = (): boolean => findExecutable('nginx') !== undefined;
/** Both redis-server and nginx: `t.skip(CLUSTER_SKIP_MESSAGE)` unless this holds. */
export const clusterToolsAvailable = (): boolean => redisAvailable() && nginxAvailable();

function executable(name: string): string {
    const found = findExecutable(name);
    if (found === undefined) throw new Error(`${name} is not installed: ${CLUSTER_INSTALL_COMMAND}`);
    return found;
}

async function tempDir(t: TeardownScope, prefix: string): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), prefix));
    closeAfter(t, () => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** A started process, its output read line by line (so it never blocks on a full pipe) and its last lines kept. */
interface Watched {
    child: ChildProcess;
    lines: string[];
    exited: Promise<void>;
}

function watch(child: ChildProcess, onLine: (line: string) => void = () => {}, keep = KEPT_LINES): Watched {
    const lines: string[] = [];
    for (const stream of [child.stdout, child.stderr]) {
        if (stream === null) continue;
        createInterface({ input: stream }).on('line', line => {
            lines.push(line);
            if (lines.length > keep) lines.shift();
            onLine(line);
        });
    }
    const exited = once(child, 'exit').then(() => undefined);
    return { child, lines, exited };
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Waits until `probe` holds, failing at once (with the process's output) if the process ends first. */
async function untilServing({ child, lines }: Watched, probe: () => Promise<boolean>, what: string): Promise<void> {
    const serving = async () => {
        if (hasExited(child)) throw new Error(`${what}: exited (${child.exitCode ?? child.signalCode}) before serving`);
        return probe();
    };
    try {
        await waitFor(serving, START_DEADLINE_MS, what);
    } catch (error) {
        throw new Error(`${(error as Error).message}; its output:\n${lines.join('\n')}`, { cause: error });
    }
}

/**
 * Sends `signal` and waits for the exit; SIGKILL after STOP_GRACE_MS. `group`: the signal goes to the process group
 * (nginx's workers outlive a killed master otherwise).
 */
async function stopProcess({ child, exited }: Watched, signal: NodeJS.Signals, group = false): Promise<void> {
    if (hasExited(child)) return;
    const send = (which: NodeJS.Signals) => {
        try {
            if (group && child.pid !== undefined) process.kill(-child.pid, which);
            else child.kill(which);
        } catch {
            // The group is gone already (ESRCH): nothing left to signal.
        }
    };
    send(signal);
    const killer = setTimeout(() => send('SIGKILL'), STOP_GRACE_MS);
    try {
        await exited;
    } finally {
        clearTimeout(killer);
    }
}

/** Whether a TCP connection to 127.0.0.1:port is accepted and, given `say`, answered with `expect` in its first reply. */
function tcpProbe(port: number, say?: string, expect?: string): Promise<boolean> {
    return new Promise(resolve => {
        const socket = connect({ host: '127.0.0.1', port });
        let reply = '';
        const finish = (ok: boolean) => {
            socket.destroy();
            resolve(ok);
        };
        socket.setTimeout(2_000, () => finish(false));
        socket.once('error', () => finish(false));
        socket.once('close', () => finish(false));
        socket.once('connect', () => (say === undefined ? finish(true) : socket.write(say)));
        socket.on('data', chunk => {
            reply += chunk.toString();
            if (expect !== undefined && reply.includes('\r\n')) finish(reply.startsWith(expect));
        });
    });
}

/**
 * Starts a server on a port found free, on another one if that was taken meanwhile (another test's server got it
 * between freePort and the bind): `launch` says whether a failure was that.
 */
async function onFreePort<T>(launch: (port: number) => Promise<T | 'port taken'>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
        const started = await launch(await freePort());
        if (started !== 'port taken') return started;
        if (attempt === 3) throw new Error('three free ports were taken before the server could bind them');
    }
}

/** Whether redis on 127.0.0.1:port answers PING with +PONG. */
export const redisPing = (port: number): Promise<boolean> => tcpProbe(port, 'PING\r\n', '+PONG');

const portTaken = (lines: readonly string[]) => lines.some(line => /address already in use/i.test(line));

export interface RunningRedis {
    /** redis://127.0.0.1:PORT, for cluster.redis.url. */
    url: string;
    port: number;
    /** Stops redis (SIGTERM by default; SIGKILL for a crash) and waits for it to be gone. */
    stop(signal?: NodeJS.Signals): Promise<void>;
    /** Starts it again on the same port, empty (nothing is saved), and waits until it answers PING. */
    start(): Promise<void>;
}

/** redis-server on a free loopback port, nothing saved to disk; stopped when the test ends. */
export async function startRedis(t: TeardownScope): Promise<RunningRedis> {
    const binary = executable('redis-server');
    const dir = await tempDir(t, 'cluster-redis-');
    const configFile = path.join(dir, 'redis.conf');
    let current: Watched | undefined;
    closeAfter(t, () => current && stopProcess(current, 'SIGKILL'));

    const launch = async (port: number): Promise<'started' | 'port taken'> => {
        const config = [`port ${port}`, 'bind 127.0.0.1', 'protected-mode yes', 'save ""', 'appendonly no', `dir ${dir}`, 'daemonize no', 'logfile ""'];
        await writeFile(configFile, `${config.join('\n')}\n`);
        const started = watch(spawn(binary, [configFile], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }));
        current = started;
        try {
            await untilServing(started, () => redisPing(port), `redis-server on port ${port}`);
            return 'started';
        } catch (error) {
            if (hasExited(started.child) && portTaken(started.lines)) return 'port taken';
            throw error;
        }
    };
    let port = 0;
    await onFreePort(async candidate => {
        port = candidate;
        return launch(candidate);
    });
    return {
        url: `redis://127.0.0.1:${port}`,
        port,
        stop: async (signal = 'SIGTERM') => {
            if (current) await stopProcess(current, signal);
        },
        start: async () => {
            if (current && !hasExited(current.child)) throw new Error('redis is still running');
            if ((await launch(port)) === 'port taken') throw new Error(`port ${port} was taken while redis was stopped`);
        }
    };
}

export interface RunningNginx {
    /** http://127.0.0.1:PORT: requests go round robin to the upstream ports. */
    url: string;
    port: number;
    /** The master process; its children are the workers (see nginxWorkers). */
    pid: number;
    /** Rewrites the upstream list and reloads (SIGHUP); resolves once the old workers are gone. */
    reload(upstreamPorts: readonly number[]): Promise<void>;
    /** nginx's error log so far (for a failing test's message). */
    errorLog(): string;
}

/**
 * What an MCP gateway needs from its proxy:
 * - SSE (answers and GET streams) passed through as written: no response buffering, long read timeout, HTTP/1.1.
 * - Request bodies passed on unbuffered and unbounded (client_max_body_size 0): the gateway's own limits decide.
 * - A replica that refuses connections (killed, restarting) is skipped for the next one. max_fails=0 keeps every
 *   replica in the rotation: a restarted one serves the next request sent to it, with no 10 s penalty.
 * - No non_idempotent retry: a POST a replica received before it died is not replayed on another (a tool call could
 *   run twice); refused connections are retried anyway, the request was never sent.
 * - Plain round robin, no affinity: consecutive requests of one session land on different replicas, as they may in
 *   production. X-Upstream names the replica that answered, so a test can see where each request went.
 * - `keepalive`: idle connections to the replicas kept open (per worker), as a production proxy would; without it
 *   every request opens a connection to its replica. The tests leave it off: a request is never sent on a pooled
 *   connection a killed replica left behind.
 */
function nginxConfig(dir: string, port: number, upstreamPorts: readonly number[], keepalive?: number): string {
    const servers = upstreamPorts.map(upstream => `        server 127.0.0.1:${upstream} max_fails=0;`).join('\n');
    const pooled = keepalive === undefined ? '' : `\n        keepalive ${keepalive};`;
    const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(kind => `    ${kind}_temp_path ${path.join(dir, kind)};`).join('\n');
    // As root, workers would run as "nobody", which cannot enter this private folder (its temp paths).
    const user = process.getuid?.() === 0 ? 'user root;\n' : '';
    return `${user}daemon off;
master_process on;
worker_processes 1;
error_log ${path.join(dir, 'error.log')} info;
pid ${path.join(dir, 'nginx.pid')};
events { worker_connections 1024; }
http {
${temp}
    access_log ${path.join(dir, 'access.log')};
    upstream gateways {
${servers}${pooled}
    }
    server {
        listen 127.0.0.1:${port};
        client_max_body_size 0;
        location / {
            proxy_pass http://gateways;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
            proxy_next_upstream error timeout;
            add_header X-Upstream $upstream_addr always;
        }
    }
}
`;
}

export interface NginxOptions {
    /** Idle connections to the replicas kept per worker (nginx's `keepalive`); default none. */
    keepalive?: number;
}

/** nginx round-robin over 127.0.0.1:<upstreamPorts>, on a free loopback port; stopped (SIGQUIT) when the test ends. */
export async function startNginx(t: TeardownScope, upstreamPorts: readonly number[], { keepalive }: NginxOptions = {}): Promise<RunningNginx> {
    const binary = executable('nginx');
    const dir = await tempDir(t, 'cluster-nginx-');
    const configFile = path.join(dir, 'nginx.conf');
    const errorFile = path.join(dir, 'error.log');
    const errorLog = () => (existsSync(errorFile) ? readFileSync(errorFile, 'utf8') : '');
    let started: Watched | undefined;
    closeAfter(t, () => started && stopProcess(started, 'SIGQUIT', true));

    const port = await onFreePort(async candidate => {
        await writeFile(configFile, nginxConfig(dir, candidate, upstreamPorts, keepalive));
        // Its own process group, so teardown can reach the workers too; -e: errors before the config is read.
        started = watch(spawn(binary, ['-p', dir, '-c', configFile, '-e', errorFile], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
        try {
            await untilServing(started, () => tcpProbe(candidate), `nginx on port ${candidate}`);
            return candidate;
        } catch (error) {
            if (hasExited(started.child) && portTaken([...started.lines, errorLog()])) return 'port taken';
            throw new Error(`${(error as Error).message}; error log:\n${errorLog()}`, { cause: error });
        }
    });

    const reload = async (ports: readonly number[]) => {
        const master = started!;
        const workersBefore = nginxWorkers(master.child.pid!);
        await writeFile(configFile, nginxConfig(dir, port, ports, keepalive));
        master.child.kill('SIGHUP');
        // The reload is done when the old workers have ended and a new one runs (an invalid config keeps the old ones).
        const reloaded = () => {
            const now = nginxWorkers(master.child.pid!);
            return now.length > 0 && now.every(pid => !workersBefore.includes(pid));
        };
        await waitFor(reloaded, START_DEADLINE_MS, 'nginx reload').catch((error: Error) => {
            throw new Error(`${error.message}; error log:\n${errorLog()}`, { cause: error });
        });
    };
    return { url: `http://127.0.0.1:${port}`, port, pid: started!.child.pid!, reload, errorLog };
}

/** PIDs of the master's children (its workers), from /proc. */
export function nginxWorkers(masterPid: number): number[] {
    const children = readFileSync(`/proc/${masterPid}/task/${masterPid}/children`, 'utf8').trim();
    return children === '' ? [] : children.split(' ').map(Number);
}

export interface RunningReplica {
    port: number;
    /** The MCP endpoint, as the CLI prints it ("listening on ..."). */
    url: string;
    /** The replica's JSON config file (rewrite it to hot-reload this replica). */
    configFile: string;
    /** The running process (a new one after restart). */
    child(): ChildProcess;
    /** The current process's stderr lines so far (a restart starts afresh): JSON log lines and the CLI's own lines. */
    lines(): string[];
    /** Sends the signal (SIGTERM: graceful drain; SIGKILL: crash) and waits for the exit. */
    kill(signal?: NodeJS.Signals): Promise<void>;
    /** Starts it again on the same port and waits until /readyz answers 200. */
    restart(): Promise<void>;
}

/** An origin on the replica: the MCP URL without its path, for /healthz and /readyz. */
const originOf = (url: string) => new URL(url).origin;

/**
 * The built gateway (`node dist/cli.js --config FILE`) on 127.0.0.1, on `port` or a free one, with `config` as its
 * file (listen.host and listen.port are set here); resolves once /readyz answers 200. Needs `npm run build`.
 */
export async function startReplica(t: TeardownScope, config: Record<string, unknown>, { port }: { port?: number } = {}): Promise<RunningReplica> {
    if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` (npm test does)');
    const dir = await tempDir(t, 'cluster-replica-');
    const configFile = path.join(dir, 'gateway.json');
    const listen = { ...(config.listen as Record<string, unknown> | undefined), host: '127.0.0.1', port: port ?? 0 };
    await writeFile(configFile, JSON.stringify({ ...config, listen }, null, 2));
    let current: Watched | undefined;
    closeAfter(t, () => current && stopProcess(current, 'SIGTERM'));

    // Port 0 on the first start (no race for a free port); --port on a restart keeps the port nginx knows.
    const launch = async (portArgs: string[]): Promise<string> => {
        let url: string | undefined;
        const child = spawn(process.execPath, [CLI, '--config', configFile, ...portArgs], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
        current = watch(child, line => (url ??= /^listening on (\S+)$/.exec(line)?.[1]), Infinity);
        const what = `replica ${configFile}`;
        await untilServing(current, () => Promise.resolve(url !== undefined), `${what} to listen`);
        await untilServing(current, () => readyz(url!), `${what} to be ready`);
        return url!;
    };
    const url = await launch([]);
    const { port: actual } = new URL(url);
    return {
        port: Number(actual),
        url,
        configFile,
        child: () => current!.child,
        lines: () => [...current!.lines],
        kill: async (signal = 'SIGTERM') => stopProcess(current!, signal),
        restart: async () => {
            if (!hasExited(current!.child)) throw new Error('the replica is still running');
            await launch(['--port', actual]);
        }
    };
}

async function readyz(url: string): Promise<boolean> {
    try {
        const response = await fetch(`${originOf(url)}/readyz`);
        await response.body?.cancel();
        return response.status === 200;
    } catch {
        return false;
    }
}
