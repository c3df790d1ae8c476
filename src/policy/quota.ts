/**
 * Whose quota a request counts against (sessions per client, rate limit). A
 * configured client is one caller wherever it calls from. The anonymous client
 * (auth.mode none) is anyone, so one shared quota would let a single caller lock
 * every other one out: it is keyed by the caller's address instead. IPv6 is
 * keyed by /64, the usual smallest allocation to one site, so a caller cannot
 * get a fresh quota per address of its own prefix. Metrics still say
 * `anonymous`: addresses never become label values.
 */
import ipaddr from 'ipaddr.js';
import type { ClientProfile } from './clients.js';
import { ANONYMOUS_CLIENT_ID } from '../config/policy-schema.js';

/** Keys are map keys only; an address-like string of any length must not make one large. */
const MAX_KEY_LENGTH = 64;

export function quotaKey(client: ClientProfile, address: string | undefined): string {
    if (client.id !== ANONYMOUS_CLIENT_ID) return client.id;
    return `${ANONYMOUS_CLIENT_ID}@${address === undefined ? 'unknown' : addressKey(address)}`;
}

/** A dotted-quad IPv4 address as ipaddr.js writes it back (decimal, no leading zeros): what a socket reports. */
const CANONICAL_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/**
 * IPv4 as it is (IPv4-mapped IPv6 too), IPv6 as its /64 prefix; anything else as it came, bounded.
 * @internal exported for its tests
 */
export function addressKey(address: string): string {
    // The common case (every request of an anonymous caller over IPv4) without parsing: measured ~1 us a call.
    if (CANONICAL_IPV4.test(address)) return address;
    if (!ipaddr.isValid(address)) return address.slice(0, MAX_KEY_LENGTH);
    const parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv4') return parsed.toString();
    const ipv6 = parsed as ipaddr.IPv6;
    if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().toString();
    return `${ipv6.parts
        .slice(0, 4)
        .map(part => part.toString(16))
        .join(':')}::/64`;
}
