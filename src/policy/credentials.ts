/**
 * What credentials an HTTP request carries: `Authorization: Bearer <token>`
 * or `X-API-Key: <key>`. Pure, so the parsing rules are unit-tested alone.
 */
export type Credentials =
    | { kind: 'none' }
    /** A header was sent but is not a usable credential (another scheme, empty, both headers disagreeing). */
    | { kind: 'malformed' }
    | { kind: 'token'; token: string; via: 'bearer' | 'x-api-key' };

/**
 * Longer tokens are refused before any hashing or parsing.
 * @internal exported for its tests
 */
export const MAX_CREDENTIAL_LENGTH = 8192;

type HeaderValue = string | string[] | undefined;

export function readCredentials(headers: { authorization?: HeaderValue; 'x-api-key'?: HeaderValue }): Credentials {
    const authorization = single(headers.authorization);
    const apiKey = single(headers['x-api-key']);
    if (authorization === null || apiKey === null) return { kind: 'malformed' };
    let bearer: string | undefined;
    if (authorization !== undefined) {
        const match = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(authorization);
        if (match === null) return { kind: 'malformed' };
        bearer = match[1]!;
    }
    const key = apiKey?.trim();
    if (key === '') return { kind: 'malformed' };
    if (bearer !== undefined && key !== undefined && bearer !== key) return { kind: 'malformed' };
    const token = bearer ?? key;
    if (token === undefined) return { kind: 'none' };
    if (token.length > MAX_CREDENTIAL_LENGTH) return { kind: 'malformed' };
    return { kind: 'token', token, via: bearer !== undefined ? 'bearer' : 'x-api-key' };
}

/** null for a header sent more than once: which one counts would be ambiguous. */
function single(value: HeaderValue): string | undefined | null {
    if (Array.isArray(value)) return value.length === 1 ? value[0]! : null;
    return value;
}
