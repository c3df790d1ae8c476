/**
 * The values of a config that must never appear in a log line, nor in health,
 * the dashboard, metrics or what the CLI prints: every upstream
 * header value and stdio environment value (and the token of a `Bearer` or
 * `Basic` header), passwords in upstream URLs (and the Basic credentials made
 * of them), an upstream's `auth` token or client secret (in each form it is
 * sent in; the access tokens fetched with a client secret are redacted as they
 * arrive, see diagnostics/redaction.ts), `auth.secret`, `cursorSecret`, `sessions.secrets`, the password of
 * `cluster.redis.url`, `metrics.bearerToken`, the trace collector's `tracing.headers` and endpoint password, the values of VS Code `${input:ID}`s
 * (`upstreamsFrom[].inputs`), and the value of every secret expansion, wherever in the config it went (a token
 * expanded into a stdio server's args is printed when the server echoes its argv): see withSecretExpansions. Values
 * shorter than MIN_SECRET_LENGTH are left out: they would match ordinary words
 * all over the log, and the schema asks more of every real secret field. So are
 * the environment variables that configure a process rather than authorise it
 * (PATH, HOME, ...): a missing command's message names the PATH it searched.
 * (Client API keys are not here: they are hashed at load and never kept.)
 * The standard OTEL_* environment holds the collector's credentials too: see environmentSecrets.
 */
import { clientSecretBasic, formEncode } from '../lib/client-secret-basic.js';
import { keyValueList } from '../lib/key-value-list.js';
import { urlCredentials } from '../lib/url-credentials.js';
import type { Expansion } from './interpolate.js';
import type { GatewayConfig } from './schema.js';
import type { UpstreamAuth } from './upstream-auth-schema.js';

const MIN_SECRET_LENGTH = 8;

/** Environment variables whose values are locations and settings, never credentials. */
const PLAIN_ENV: ReadonlySet<string> = new Set(['PATH', 'HOME', 'PWD', 'TMPDIR', 'SHELL', 'TERM', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TZ', 'USER', 'LOGNAME', 'NODE_ENV']);

const SCHEME_TOKEN = /^\s*(?:bearer|basic)\s+(\S+)\s*$/i;

/** Whether an environment variable holds a location or setting (PATH, HOME, ...) rather than something secret. */
export function isPlainEnvName(name: string): boolean {
    return PLAIN_ENV.has(name);
}

/**
 * The values of the config's secret expansions, under a symbol key: spreads of the config keep them, JSON and
 * Object.keys do not see them, and no schema field can be set to them.
 */
const SECRET_EXPANSIONS = Symbol('values of secret expansions');

type Expanded = { readonly [SECRET_EXPANSIONS]?: readonly string[] };

/**
 * `config` (a copy) with `values` added to the values of its secret expansions: the placeholders that stand for
 * secrets, expanded anywhere in the config (`${env:X}` of a client config file, an operator's `${input:ID}`, the
 * gateway config's `${X}` in a secret field). configSecrets returns them, so every output redacts them.
 */
export function withSecretExpansions<T extends object>(config: T, values: Iterable<string>): T {
    const all = [...new Set([...secretExpansionsOf(config), ...values])];
    return Object.defineProperty({ ...config }, SECRET_EXPANSIONS, { value: all, enumerable: true });
}

function secretExpansionsOf(config: object): readonly string[] {
    return (config as Expanded)[SECRET_EXPANSIONS] ?? [];
}

/**
 * Which of the gateway config's `${X}` expansions are secrets: those that went into a secret value (a header, an
 * env value, a URL's password, ...), unless X holds a location or setting (`"DATA": "${HOME}/data"` does not make
 * every path under HOME a secret). `expansions` pairs each value with the whole string it went into.
 */
export function secretExpansionsIn(config: Parameters<typeof configSecrets>[0], expansions: readonly Expansion[]): string[] {
    const secrets = configSecrets(config);
    return expansions.filter(({ name, value, into }) => !isPlainEnvName(name) && secrets.some(secret => secret.includes(value) && into.includes(secret))).map(({ value }) => value);
}

export function configSecrets(config: Pick<GatewayConfig, 'upstreams' | 'upstreamsFrom' | 'auth' | 'cursorSecret' | 'sessions' | 'cluster' | 'metrics' | 'tracing'>): string[] {
    const values: string[] = [];
    for (const upstream of config.upstreams) {
        // A folder of prompt files holds no credentials.
        if (upstream.transport === 'files') continue;
        if (upstream.transport === 'stdio') {
            for (const [name, value] of Object.entries(upstream.env)) if (!isPlainEnvName(name)) values.push(value);
            continue;
        }
        values.push(...headerSecrets(upstream.headers), ...urlSecrets(upstream.url));
        if (upstream.auth !== undefined) values.push(...authSecrets(upstream.auth));
    }
    if (config.auth.mode === 'jwt' && config.auth.secret !== undefined) values.push(config.auth.secret);
    values.push(config.cursorSecret, ...config.sessions.secrets);
    if (config.cluster?.redis !== undefined) values.push(...urlSecrets(config.cluster.redis.url));
    if (config.metrics.bearerToken !== undefined) values.push(config.metrics.bearerToken);
    values.push(...headerSecrets(config.tracing.headers ?? {}));
    if (config.tracing.endpoint !== undefined) values.push(...urlSecrets(config.tracing.endpoint));
    for (const from of config.upstreamsFrom) values.push(...Object.values(from.inputs));
    values.push(...secretExpansionsOf(config));
    return [...new Set(values.filter(value => value.length >= MIN_SECRET_LENGTH))];
}

/** The variables that hold the trace collector's headers, as `key=value,...` (URL-encoded values), and its URL. */
const OTLP_HEADER_VARIABLES = ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'];
const OTLP_ENDPOINT_VARIABLES = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];

/**
 * The secrets of the environment the gateway reads besides its config: the trace collector's header values (as
 * written and decoded, and a Bearer or Basic token) and its endpoint's password, which the exporter sends. The loaded
 * config carries them as secret expansions (config/load.ts), so every output that redacts the config redacts them.
 */
export function environmentSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
    const values: string[] = [];
    for (const variable of OTLP_HEADER_VARIABLES) {
        const raw = env[variable];
        if (raw === undefined) continue;
        const written = raw.split(',').map(entry => entry.slice(entry.indexOf('=') + 1).trim());
        values.push(...written, ...headerSecrets(keyValueList(raw).values));
    }
    for (const variable of OTLP_ENDPOINT_VARIABLES) {
        const raw = env[variable]?.trim();
        // One that is not a URL is refused at start (observability/tracing.ts) and holds no password to send.
        if (raw !== undefined && URL.canParse(raw)) values.push(...urlSecrets(raw));
    }
    return values.filter(value => value.length >= MIN_SECRET_LENGTH);
}

/** Every header value, and the token of a `Bearer` or `Basic` one. */
function headerSecrets(headers: Readonly<Record<string, string>>): string[] {
    const values: string[] = [];
    for (const value of Object.values(headers)) {
        values.push(value);
        const token = SCHEME_TOKEN.exec(value)?.[1];
        if (token !== undefined) values.push(token);
    }
    return values;
}

/** A bearer token; a client secret as written, as form-encoded (post) and inside the Basic credentials (basic). */
function authSecrets(auth: UpstreamAuth): string[] {
    if (auth.type === 'bearer') return [auth.token];
    const basic = clientSecretBasic(auth.clientId, auth.clientSecret);
    return [auth.clientSecret, formEncode(auth.clientSecret), basic, basic.slice('Basic '.length)];
}

/** The password of a URL as written and decoded, and the Basic credentials sent for it. */
function urlSecrets(raw: string): string[] {
    const credentials = urlCredentials(new URL(raw));
    if (credentials === undefined || credentials.written.password === '') return [];
    const basic = credentials.authorization.slice('Basic '.length);
    return [credentials.written.password, credentials.decoded.password, basic];
}
