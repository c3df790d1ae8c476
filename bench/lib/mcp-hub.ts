/**
 * mcp-hub (npm, pinned in devDependencies) as a peer: its own CLI, started as `mcp-hub --port P --config FILE`
 * would start it (node on its bin script, so the process measured is the hub itself), with one upstream. Its MCP
 * endpoint is /mcp over the legacy HTTP+SSE transport; prompts are named `<server>__<prompt>`. Its state and log
 * files go to a temporary home, not the user's.
 */
import { createRequire } from 'node:module';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/helpers.js';
import { spawnWatched, type Watched } from './processes.js';

export const MCP_HUB_VERSION = (createRequire(import.meta.url)('mcp-hub/package.json') as { version: string }).version;

export async function startMcpHub(upstreams: Record<string, string>): Promise<Watched & { url: string }> {
    const home = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-hub-'));
    const config = path.join(home, 'mcp-servers.json');
    await writeFile(config, JSON.stringify({ mcpServers: Object.fromEntries(Object.entries(upstreams).map(([name, url]) => [name, { url }])) }));
    const port = await freePort();
    const bin = path.join(path.dirname(createRequire(import.meta.url).resolve('mcp-hub/package.json')), 'dist/cli.js');
    const hub = await spawnWatched('mcp-hub', process.execPath, [bin, '--port', String(port), '--config', config], {
        ready: /(\d+)\/(\d+) servers started successfully/,
        cwd: home,
        env: { HOME: home, XDG_STATE_HOME: path.join(home, 'state'), XDG_CONFIG_HOME: path.join(home, 'config'), XDG_DATA_HOME: path.join(home, 'data') }
    });
    const [, started, total] = hub.readyMatch;
    if (started !== total) {
        await hub.stop();
        throw new Error(`mcp-hub connected ${started} of ${total} upstreams; its last lines:\n${hub.tail().join('\n')}`);
    }
    return { ...hub, url: `http://127.0.0.1:${port}/mcp` };
}
