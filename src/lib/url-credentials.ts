/**
 * A user and password written in an upstream's URL are sent as Basic
 * credentials, and must be redacted from logs in every form they take: one
 * derivation, used by both, so the two cannot drift apart.
 */

export interface UrlCredentials {
    /** As written in the URL (percent-encoded). */
    written: { username: string; password: string };
    /** Percent-decoded, as sent; as written where that is not valid percent-encoding (`50%off`). */
    decoded: { username: string; password: string };
    /** The value of the Authorization header sent for them. */
    authorization: string;
}

export function urlCredentials(url: URL): UrlCredentials | undefined {
    if (url.username === '' && url.password === '') return undefined;
    const decoded = { username: decode(url.username), password: decode(url.password) };
    const basic = Buffer.from(`${decoded.username}:${decoded.password}`, 'utf8').toString('base64');
    return { written: { username: url.username, password: url.password }, decoded, authorization: `Basic ${basic}` };
}

function decode(text: string): string {
    try {
        return decodeURIComponent(text);
    } catch {
        return text;
    }
}
