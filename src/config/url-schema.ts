/** The URL fields of the config: any http(s) URL, or one that secrets and tokens may travel to. */
import { z } from 'zod';
import { isLoopback } from '../lib/loopback.js';

/** An http:// or https:// URL. */
export function httpUrl(description?: string) {
    const url = z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' });
    return description === undefined ? url : url.describe(description);
}

export interface SecureUrlRules {
    /** A query is allowed (a token endpoint may have one, RFC 6749 section 3.2); by default it is refused. */
    query?: 'allowed';
    /** What to do instead of a user and password in the URL; by default, remove them. */
    credentialsFix?: string;
}

/**
 * https, or http on a loopback host (a development or test server), since what is sent there (a client secret, a
 * token) must not cross a network in clear (OAuth 2.1 requires TLS); no fragment, no user or password, no query
 * unless allowed. `example` ends the message of a value that is no URL at all.
 */
export function secureUrl(example: string, rules: SecureUrlRules = {}) {
    return z.url({ protocol: /^https?$/, message: `must be an absolute https:// URL (${example})` }).superRefine((value, ctx) => {
        // Refinements run after a failed format check too; that one has said what is wrong.
        if (!URL.canParse(value)) return;
        const url = new URL(value);
        if (url.hash !== '' || value.includes('#')) ctx.addIssue({ code: 'custom', message: 'must not have a fragment ("#...")' });
        if (rules.query !== 'allowed' && (url.search !== '' || value.includes('?'))) ctx.addIssue({ code: 'custom', message: 'must not have a query ("?...")' });
        if (url.username !== '' || url.password !== '') {
            ctx.addIssue({ code: 'custom', message: `must not carry a user or password; ${rules.credentialsFix ?? 'remove them'}` });
        }
        if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
            ctx.addIssue({ code: 'custom', message: `must use https:// (http:// only on a loopback host such as 127.0.0.1); got "${url.protocol}//${url.host}"` });
        }
    });
}
