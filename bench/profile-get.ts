/**
 * Where the gateway's CPU goes on a prompts/get: runs the built gateway under
 * `--cpu-prof` in front of one stdio fixture, sends many gets over one
 * keep-alive connection, and charges every profile sample taken during the
 * timed loop to the nearest package on its stack (a node_modules package, or
 * the gateway's own folder; Node's internals are charged to whoever called
 * them). Prints the table and the gateway's CPU per get (all threads, /proc).
 *
 *   npm run build && node --import tsx bench/profile-get.ts [gets=5000]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, stdioFixture } from '../test/helpers.js';

const GETS = Number(process.argv[2] ?? 5000);
const WARMUP = 1000;

interface ProfileNode {
    id: number;
    callFrame: { functionName: string; url: string };
    children?: number[];
}

interface Profile {
    nodes: ProfileNode[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(url: URL, body: unknown, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
        const req = request(
            url,
            {
                method: 'POST',
                agent,
                headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(payload), ...headers }
            },
            res => {
                const chunks: Buffer[] = [];
                res.on('data', (chunk: Buffer) => chunks.push(chunk));
                res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
                res.on('error', reject);
            }
        );
        req.on('error', reject);
        req.end(payload);
    });
}

/** Clock ticks of the process (user + system, all threads) from /proc. */
async function cpuTicks(pid: number): Promise<number> {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
}

/** The package a frame belongs to, or undefined for Node's internals and the engine's own entries. */
function ownerOf(url: string): string | undefined {
    if (url === '' || url.startsWith('node:')) return undefined;
    const modules = url.lastIndexOf('/node_modules/');
    if (modules !== -1) {
        const parts = url.slice(modules + '/node_modules/'.length).split('/');
        return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
    }
    const dist = url.indexOf('/dist/');
    if (dist !== -1) {
        const rest = url.slice(dist + '/dist/'.length).split('/');
        return `gateway: ${rest.length > 1 ? `${rest[0]}/` : rest[0]}`;
    }
    return url;
}

function chargeSamples(profile: Profile, from: number, to: number): { byOwner: Map<string, number>; totalUs: number } {
    const byId = new Map(profile.nodes.map(node => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    const owners = new Map<number, string>();
    const ownerOfNode = (id: number): string => {
        const known = owners.get(id);
        if (known !== undefined) return known;
        const start = byId.get(id)!;
        let current: number | undefined = id;
        let owner: string | undefined;
        while (current !== undefined && owner === undefined) {
            owner = ownerOf(byId.get(current)!.callFrame.url);
            current = parent.get(current);
        }
        const name = owner ?? (start.callFrame.url.startsWith('node:') ? 'node internals' : start.callFrame.functionName || '(engine)');
        owners.set(id, name);
        return name;
    };
    const byOwner = new Map<string, number>();
    let time = profile.startTime;
    let totalUs = 0;
    for (const [index, id] of profile.samples.entries()) {
        const delta = profile.timeDeltas[index + 1] ?? 0;
        time += profile.timeDeltas[index] ?? 0;
        if (time < from || time > to) continue;
        const owner = ownerOfNode(id);
        if (owner === '(idle)') continue;
        byOwner.set(owner, (byOwner.get(owner) ?? 0) + delta);
        totalUs += delta;
    }
    return { byOwner, totalUs };
}

async function main(): Promise<void> {
    const dir = await mkdtemp(path.join(tmpdir(), 'profile-get-'));
    const config = path.join(dir, 'gateway.json');
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, log: { level: 'warn' }, limits: { rateLimit: { requestsPerSecond: 0, burst: 1 } }, upstreams: [stdioFixture('p', { prompts: 5 })] }));
    const gateway = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, path.join(ROOT, 'dist/cli.js'), '--config', config], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe']
    });
    try {
        const url = await new Promise<URL>((resolve, reject) => {
            createInterface({ input: gateway.stderr }).on('line', line => {
                const match = /^listening on (\S+)/.exec(line);
                if (match) resolve(new URL(match[1]!));
            });
            gateway.once('exit', code => reject(new Error(`gateway exited with ${code}`)));
        });
        const init = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'profile', version: '1' } } }, {});
        const session = { 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
        await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
        const get = async (id: number) => {
            const answer = await post(url, { jsonrpc: '2.0', id, method: 'prompts/get', params: { name: 'p__prompt-000' } }, session);
            if (answer.status !== 200 || !answer.text.includes('"result"')) throw new Error(`get failed: ${answer.status} ${answer.text}`);
        };
        for (let id = 1; id <= WARMUP; id++) await get(id);
        const ticksBefore = await cpuTicks(gateway.pid!);
        const from = Number(process.hrtime.bigint() / 1000n);
        for (let id = 1; id <= GETS; id++) await get(WARMUP + id);
        const to = Number(process.hrtime.bigint() / 1000n);
        const ticks = (await cpuTicks(gateway.pid!)) - ticksBefore;
        const exited = once(gateway, 'exit');
        gateway.kill('SIGTERM');
        await exited;
        const file = (await readdir(dir)).find(name => name.endsWith('.cpuprofile'));
        if (file === undefined) throw new Error('no profile written');
        const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as Profile;
        const { byOwner, totalUs } = chargeSamples(profile, from, to);
        const perGet = (us: number) => (us / GETS).toFixed(1).padStart(8);
        process.stdout.write(`${GETS} gets over one keep-alive connection: ${((to - from) / GETS).toFixed(0)} us per get round trip\n`);
        process.stdout.write(`gateway CPU per get (all threads, /proc): ${(((ticks * 1e6) / 100) / GETS).toFixed(0)} us; main thread samples: ${(totalUs / GETS).toFixed(0)} us\n\n`);
        process.stdout.write(`${'us/get'.padStart(8)}  share  charged to\n`);
        for (const [owner, us] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
            process.stdout.write(`${perGet(us)}  ${((100 * us) / totalUs).toFixed(1).padStart(4)}%  ${owner}\n`);
        }
    } finally {
        if (gateway.exitCode === null) gateway.kill('SIGKILL');
        agent.destroy();
        await rm(dir, { recursive: true, force: true });
    }
}

await main();
