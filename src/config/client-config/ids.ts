/** Upstream ids from the server names of client config files, which allow what ids do not. */
import { UPSTREAM_ID_PATTERN } from '../schema.js';

const MAX_ID_LENGTH = 63;

/**
 * The name made an id: accents dropped (`Café` -> `cafe`), lowercased, every run of other characters turned into
 * one "-" (`my_server`, `My Server` -> `my-server`, `io.github/foo` -> `io-github-foo`), no "-" at either end, cut
 * to 63 characters. undefined when nothing is left (a name of only symbols or of a non-Latin script).
 */
export function upstreamIdFor(name: string): string | undefined {
    const id = name
        .normalize('NFKD')
        .replace(/\p{Mark}+/gu, '')
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+/, '')
        .slice(0, MAX_ID_LENGTH)
        .replace(/-+$/, '');
    return UPSTREAM_ID_PATTERN.test(id) ? id : undefined;
}
