/**
 * The protocol revisions the gateway serves downstream, and how `initialize`
 * settles on one: the client's own when the gateway speaks it, else the
 * newest (the client then decides whether it can go on). Dates compare as
 * strings. 2024-10-07, a draft some SDKs still list, is not among them.
 */

/** The handshake-era revisions, newest first (the stateless ones are in era.ts). */
export const PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

export const LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0]!;

export function isSupportedVersion(version: string): boolean {
    return PROTOCOL_VERSIONS.includes(version);
}

export function negotiateVersion(requested: string): string {
    return isSupportedVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}
