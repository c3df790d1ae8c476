import { randomBytes } from 'node:crypto';

/**
 * A tag naming one gateway process among its replicas: 6 random bytes, base64url (8 characters). Per gateway, never a
 * module constant: gateways started in one process (tests) are replicas of each other too.
 */
export function mintInstanceTag(): string {
    return randomBytes(6).toString('base64url');
}
