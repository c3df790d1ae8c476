/**
 * Where the gateway's CPU goes on a prompts/get, one request at a time in front of a stdio upstream (the full bench
 * profiles an HTTP upstream at concurrency 32): the built gateway, a CPU profile of its main thread over the
 * inspector for the timed loop, each sample charged to the nearest package on its stack (lib/cpu-profile.ts), and
 * the gateway's CPU per get from /proc (all threads).
 *
 *   npm run build && node --import tsx bench/profile-get.ts [gets=5000]
 */
import { stdioFixture } from '../test/helpers.js';
import { chargeToPackages } from './lib/cpu-profile.js';
import { startGateway } from './lib/gateway.js';
import { Inspector } from './lib/inspector.js';
import { StreamableChannel } from './lib/mcp-client.js';
import { cpuNs } from './lib/processes.js';

const GETS = Number(process.argv[2] ?? 5000);
const WARMUP = 1000;

const gateway = await startGateway('gateway', { log: { level: 'warn' }, upstreams: [stdioFixture('p', { prompts: 5 })] }, { inspect: true });
const channel = await StreamableChannel.open(gateway.url);
const inspector = await Inspector.attach(gateway.inspector!);
try {
    const get = async () => {
        const result = (await channel.call('prompts/get', { name: 'p__prompt-000' })) as { messages?: unknown[] };
        if (!Array.isArray(result.messages)) throw new Error(`prompts/get answered ${JSON.stringify(result).slice(0, 200)}`);
    };
    for (let i = 0; i < WARMUP; i++) await get();
    const cpuBefore = cpuNs(gateway.pid);
    const started = performance.now();
    const { profile } = await inspector.profile(async () => {
        for (let i = 0; i < GETS; i++) await get();
    });
    const roundTripUs = ((performance.now() - started) * 1000) / GETS;
    const cpuUs = (cpuNs(gateway.pid) - cpuBefore) / 1000 / GETS;
    const byOwner = [...chargeToPackages(profile)].sort((a, b) => b[1] - a[1]);
    const sampledUs = byOwner.reduce((sum, [, micros]) => sum + micros, 0);
    process.stdout.write(`${GETS} gets over one keep-alive connection: ${roundTripUs.toFixed(0)} us per get round trip (under the profiler)\n`);
    process.stdout.write(`gateway CPU per get (all threads, /proc): ${cpuUs.toFixed(0)} us; main thread samples: ${(sampledUs / GETS).toFixed(0)} us\n\n`);
    process.stdout.write(`${'us/get'.padStart(8)}  share  charged to\n`);
    for (const [owner, micros] of byOwner.slice(0, 25)) {
        process.stdout.write(`${(micros / GETS).toFixed(1).padStart(8)}  ${((100 * micros) / sampledUs).toFixed(1).padStart(4)}%  ${owner}\n`);
    }
} finally {
    inspector.close();
    await channel.close();
    await gateway.stop();
}
process.exit(0);
