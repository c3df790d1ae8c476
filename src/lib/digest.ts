/** A short, URL-safe SHA-256 digest: enough to tell versions apart, small enough for cursors. */
import { createHash } from 'node:crypto';

export function shortDigest(text: string): string {
    return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}
