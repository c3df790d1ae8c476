/**
 * The Authorization header of OAuth's client_secret_basic (RFC 6749 section
 * 2.3.1): client id and secret each form-encoded, then joined by ":" and
 * sent as Basic credentials. One derivation for the token request and for
 * the log's redaction list, so the two cannot drift apart.
 */

/** application/x-www-form-urlencoded encoding of one value. */
export function formEncode(value: string): string {
    return encodeURIComponent(value).replace(/%20/g, '+');
}

export function clientSecretBasic(clientId: string, clientSecret: string): string {
    return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`, 'utf8').toString('base64')}`;
}
