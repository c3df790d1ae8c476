/**
 * The handshake-era revisions the gateway serves downstream, and how
 * `initialize` settles on one: the client's own when the gateway speaks it,
 * else the newest (the client then decides whether it can go on). 2024-10-07,
 * a draft some SDKs still list, is not among them. The revisions themselves are
 * src/protocol/revisions.ts's table.
 */
import { LATEST_HANDSHAKE, negotiateHandshake, revisionOf } from '../protocol/revisions.js';

export const LATEST_PROTOCOL_VERSION = LATEST_HANDSHAKE.version;

export function isSupportedVersion(version: string): boolean {
    return revisionOf(version)?.era === 'handshake';
}

export function negotiateVersion(requested: string): string {
    return negotiateHandshake(requested).version;
}
