/** Config for the revision fixture (test/fixtures/revision-server.ts) as a stdio upstream speaking one revision. */
import path from 'node:path';
import { ROOT } from './helpers.js';

const REVISION_SERVER = path.join(ROOT, 'test/fixtures/revision-server.ts');

/** `flags`: the fixture's own (--silent, --ttl-ms, --empty-cursor, ...); `extra`: more upstream config. */
export function revisionUpstream(id: string, revision: string, flags: string[] = [], extra: Record<string, unknown> = {}) {
    return {
        id,
        transport: 'stdio',
        command: process.execPath,
        args: ['--import', 'tsx', REVISION_SERVER, '--revision', revision, ...flags],
        cwd: ROOT,
        protocol: revision === '2026-07-28' ? '2026-07-28' : '2025',
        // Generous: on a loaded machine a child started through tsx takes seconds.
        timeoutMs: 30_000,
        ...extra
    };
}
