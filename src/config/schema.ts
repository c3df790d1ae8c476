/**
 * The gateway's configuration schema: the single source of truth for the config
 * file's shape, its defaults, its error messages, the TypeScript types and the
 * editor JSON Schema in `config/gateway.schema.json` (generated from this file).
 */
import { z } from 'zod';
import { invalidProxyEntry } from '../lib/client-address.js';
import { isLoopback } from '../lib/loopback.js';
import { LOG_FORMATS, LOG_LEVELS } from '../diagnostics/logger.js';
import { upstreamsFromSchema } from './client-config/source-schema.js';
import { AuthSchema, checkPolicyConfig, ClientSchema, CorsSchema, LimitsSchema, PromptPolicySchema } from './policy-schema.js';
import { checkOverrides, OverridesSchema } from './overrides-schema.js';
import { checkUpstreamAuth, UpstreamAuthSchema } from './upstream-auth-schema.js';
import { PROMPT_FORMATS } from './prompt-formats.js';
import { httpUrl } from './url-schema.js';
import { routeKey } from '../http-server/routes.js';
import { pathBase } from '../http-server/static-assets.js';

export const UPSTREAM_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

const upstreamId = z
    .string()
    .regex(UPSTREAM_ID_PATTERN, {
        message: 'must be 1-63 characters of lowercase letters, digits and "-", starting with a letter or digit'
    })
    .describe('Unique id of the upstream; the namespace prefix of its prompts.');

const timeoutMs = z.number().int().min(1).max(600_000).default(10_000).describe('Timeout in milliseconds for connecting and for each request to this upstream.');

// Control characters would split an HTTP header or an environment entry; the values themselves are never echoed.
const plainValue = z.string().regex(/^[^\0\r\n]*$/, { message: 'must not contain line breaks or NUL characters' });

const stringMap = (what: string) => z.record(z.string(), plainValue).default({}).describe(what);

/** How often an upstream that cannot announce changes is listed again (caching, and per upstream). */
const relistIntervalMs = z.number().int().min(100).max(86_400_000);

const reconnectFields = {
    initialMs: z.number().int().min(1).max(600_000).describe('Delay before the first reconnect attempt; it doubles after each failure.'),
    maxMs: z.number().int().min(1).max(3_600_000).describe('Longest delay between reconnect attempts.')
};

const reconnect = z
    .strictObject({ initialMs: reconnectFields.initialMs.default(250), maxMs: reconnectFields.maxMs.default(30_000) })
    .prefault({})
    .describe('Reconnect backoff (exponential with jitter) for upstreams whose connection failed or closed.');

/** What every upstream has, whatever serves its prompts: its name, how its prompts are exposed and checked. */
const catalogUpstreamFields = {
    id: upstreamId,
    namespace: z.boolean().default(true).describe('false exposes this upstream\'s prompt names without the "<id><separator>" prefix.'),
    required: z.boolean().default(false).describe('true: GET /readyz answers 503 while this upstream is not ready (a server not connected, a prompt folder not readable).'),
    prompts: PromptPolicySchema.describe("Which of this upstream's prompts the gateway exposes, by the upstream's own names."),
    passUnknownArguments: z.boolean().default(false).describe('true: forward arguments a prompt does not declare. false: reject them with -32602.'),
    overrides: OverridesSchema
};

/** What only an upstream MCP server has: a connection to keep, requests that take time. */
const commonUpstreamFields = {
    ...catalogUpstreamFields,
    timeoutMs,
    protocol: z
        .enum(['auto', '2025', '2026-07-28'])
        .default('auto')
        .describe(
            'Which era of MCP the upstream speaks. "auto" asks it (a server/discover first, then initialize for a 2025-era server; the verdict is kept until a connection fails) ; "2025" (initialize, revisions 2024-11-05 to 2025-11-25) and "2026-07-28" (stateless) skip the question.'
        ),
    maxTotalTimeoutMs: z
        .number()
        .int()
        .min(1)
        .max(3_600_000)
        .optional()
        .describe(
            'Longest a request may take in all when the client asked for progress: then each progress notification from the upstream restarts timeoutMs. Default: 300000, or timeoutMs if larger.'
        ),
    pingIntervalMs: z
        .number()
        .int()
        .min(0)
        .max(3_600_000)
        .default(30_000)
        .describe('Ping the upstream when idle this often; two failed pings in a row reconnect it. 0 turns pings off.'),
    maxConcurrency: z.number().int().min(1).max(10_000).default(16).describe('Most requests in flight to this upstream at once.'),
    maxQueue: z.number().int().min(0).max(100_000).default(256).describe('Most requests waiting for a free slot; beyond it a request fails at once with "upstream busy".'),
    reconnect: z
        .strictObject({ initialMs: reconnectFields.initialMs.optional(), maxMs: reconnectFields.maxMs.optional() })
        .optional()
        .describe('Overrides the global reconnect backoff for this upstream.'),
    relistIntervalMs: relistIntervalMs.optional().describe('Overrides caching.relistIntervalMs for this upstream (used only when it cannot announce changes).'),
    relayInputRequests: z
        .enum(['auto', 'related', 'exclusive', 'off'])
        .default('auto')
        .describe(
            'Requests this upstream sends the client while answering prompts/get (2025 era: elicitation/create, sampling/createMessage, roots/list; 2026-07-28: input_required, always relayed unless "off"). "related": a 2025 server\'s requests are relayed when they come on that request\'s own Streamable HTTP answer stream; a 2025 server on stdio or legacy SSE is told no client capabilities, so it asks nothing. "auto" (default): as "related" for what comes on an answer stream; any other request (stdio, legacy SSE, the Streamable HTTP GET stream) goes to the one prompts/get in flight on the upstream when exactly one is and no completion/complete is, is refused to the upstream when several client requests are (it cannot be told whose it is), and is answered by the gateway when none is. "exclusive": this upstream\'s prompts/get go one at a time, and what it asks meanwhile belongs to that one unless a completion/complete is in flight too (then refused; exact on every wire, but a client filling in a form holds up the others). "off": the upstream is told no client capabilities and is answered by the gateway.'
        ),
    relayRoots: z
        .boolean()
        .default(false)
        .describe(
            "2025 upstreams: also relay roots/list (otherwise answered with no roots). A 2025 server keeps roots per session, and the gateway's session with it is shared by every client: one client's roots may be used for another's requests."
        )
};

const { id: _id, ...settingsOfEveryUpstream } = commonUpstreamFields;

const importedUpstreamDefaults = z
    .strictObject(settingsOfEveryUpstream)
    .partial()
    .prefault({})
    .superRefine((defaults, ctx) => {
        if (defaults.maxTotalTimeoutMs !== undefined && defaults.timeoutMs !== undefined && defaults.maxTotalTimeoutMs < defaults.timeoutMs) {
            ctx.addIssue({ code: 'custom', path: ['maxTotalTimeoutMs'], message: `must be at least timeoutMs (${defaults.timeoutMs})` });
        }
    });

export const StdioUpstreamSchema = z
    .strictObject({
        ...commonUpstreamFields,
        transport: z.literal('stdio'),
        command: z.string().min(1, { message: 'must name the program to start' }).describe('Program to start.'),
        args: z.array(z.string()).default([]).describe('Arguments for the program.'),
        env: stringMap("Environment variables for the child, added to a minimal default environment (PATH, HOME, ...), not to the gateway's whole environment."),
        cwd: z.string().min(1).optional().describe('Working directory of the child, relative to the config file.'),
        killGraceMs: z
            .number()
            .int()
            .min(0)
            .max(60_000)
            .default(2000)
            .describe('On stop: wait this long after closing stdin before SIGTERM, and again before SIGKILL (whole process group).')
    })
    .describe('An MCP server started as a child process, spoken to over stdin/stdout.');

const httpUpstream = <T extends 'streamable-http' | 'sse' | 'http'>(transport: T, what: string) =>
    z
        .strictObject({
            ...commonUpstreamFields,
            transport: z.literal(transport),
            url: httpUrl('URL of the upstream MCP endpoint.'),
            headers: stringMap('Extra HTTP headers sent on every request (e.g. Authorization).'),
            auth: UpstreamAuthSchema
        })
        .describe(what);

/**
 * Prompts written as files: nothing to connect to and no request that takes time, so only the fields every upstream
 * has. See docs/prompt-files.md for the file format.
 */
export const FilesUpstreamSchema = z
    .strictObject({
        ...catalogUpstreamFields,
        transport: z.literal('files'),
        path: z
            .string()
            .min(1, { message: 'must name the folder of prompt files, e.g. "prompts"' })
            .describe('Folder whose prompt files (subfolders included) are served as prompts, relative to the config file; watched for changes.'),
        format: z
            .enum(PROMPT_FORMATS)
            .default('markdown')
            .describe(
                'How the folder\'s files are read (docs/prompt-files.md): "markdown" (*.md with YAML front matter, the gateway\'s own), "claude-commands" (Claude Code\'s .claude/commands), "codex-prompts" (~/.codex/prompts), "vscode-prompts" (*.prompt.md), "gemini-commands" (Gemini CLI\'s *.toml) or "skills" (folders holding a SKILL.md).'
            )
    })
    .describe("Prompts kept as files in a folder: the gateway's Markdown format or another tool's (docs/prompt-files.md).");

export const UpstreamSchema = z.discriminatedUnion('transport', [
    StdioUpstreamSchema,
    FilesUpstreamSchema,
    httpUpstream('streamable-http', 'An MCP server reached over Streamable HTTP.'),
    httpUpstream('sse', 'An MCP server reached over the legacy HTTP+SSE transport (protocol 2024-11-05).'),
    httpUpstream('http', 'An MCP server over HTTP: Streamable HTTP first, legacy HTTP+SSE if that answers 4xx.')
]);

/**
 * A path served on a listener: one leading "/", never two (a page that joins `//host/x` to its origin as a URL would
 * name another host).
 */
const URL_PATH = z.string().regex(/^\/(?!\/)[A-Za-z0-9._~/-]*$/, { message: 'must be a URL path starting with one "/" (not "//")' });

const listenSchema = z
    .strictObject({
        host: z.string().min(1).default('127.0.0.1').describe('Address to bind. Keep 127.0.0.1 unless a proxy in front checks access.'),
        port: z.number().int().min(0).max(65_535).default(8080).describe('TCP port; 0 picks a free one.'),
        path: URL_PATH.default('/mcp').describe('Path of the MCP endpoint.'),
        allowedHosts: z
            .array(z.string().min(1))
            .optional()
            .describe(
                'Host header values (hostnames, no port) accepted, against DNS rebinding. Default: localhost names when bound to a loopback address; set it when binding elsewhere.'
            ),
        allowedOrigins: z.array(z.string().min(1)).optional().describe('Origin hostnames accepted from browsers. Default: localhost origins when bound to a loopback address.'),
        cors: CorsSchema,
        trustProxy: z
            .array(z.string().min(1))
            .optional()
            .superRefine((entries, ctx) => {
                const invalid = entries === undefined ? undefined : invalidProxyEntry(entries);
                if (invalid !== undefined) {
                    ctx.addIssue({
                        code: 'custom',
                        path: [entries!.indexOf(invalid)],
                        message: `"${invalid}" is not an IP address, a CIDR range (10.0.0.0/8) or one of loopback, linklocal, uniquelocal`
                    });
                }
            })
            .describe(
                "Proxies whose X-Forwarded-For is believed when telling anonymous callers apart (auth.mode none): addresses, CIDR ranges, or loopback, linklocal, uniquelocal. Default: none; the socket's peer is the caller."
            )
    })
    .prefault({});

const urlPath = (fallback: string, what: string) => URL_PATH.default(fallback).describe(what);

/** A secret keys are derived from: long enough to be one, and from the environment rather than the file. */
const secretString = (variable: string) => z.string().min(16, { message: `must be at least 16 characters (use "\${${variable}}" and a long random value)` });

const metricsSchema = z
    .strictObject({
        enabled: z.boolean().default(true).describe('Serve Prometheus metrics.'),
        path: urlPath('/metrics', 'Path of the Prometheus endpoint.'),
        listen: z
            .strictObject({
                host: z.string().min(1).default('127.0.0.1').describe('Address to bind.'),
                port: z.number().int().min(0).max(65_535).describe('TCP port; 0 picks a free one.'),
                allowedHosts: z.array(z.string().min(1)).optional().describe('Host header values accepted. Default: localhost names when bound to a loopback address, else any.')
            })
            .optional()
            .describe(
                'A separate address for metrics, the dashboard and health checks, kept apart from the MCP endpoint. Without it they share listen (and in --stdio mode there are none).'
            ),
        bearerToken: z
            .string()
            .min(16, { message: 'must be at least 16 characters (use "${METRICS_TOKEN}" and a long random value)' })
            .regex(/^[\x21-\x7e]+$/, { message: 'must be printable ASCII without spaces, as it travels in an HTTP header' })
            .optional()
            .describe('When set, the metrics endpoint and the dashboard\'s data need "Authorization: Bearer <token>".')
    })
    .prefault({})
    .describe('Prometheus metrics of prompt usage, upstreams and sessions.');

const dashboardSchema = z
    .strictObject({
        enabled: z.boolean().optional().describe('Serve the live dashboard page. Default: on when the address serving it is a loopback address.'),
        path: urlPath('/dashboard', 'Path of the dashboard page; its data is at <path>/data.')
    })
    .prefault({})
    .describe('A live page of prompt usage and upstream health, served by the gateway itself (no external resources).');

const catalogSchema = z
    .strictObject({
        enabled: z
            .boolean()
            .default(true)
            .describe(
                'Serve the prompt catalog page on the MCP listener: every prompt the visitor may use, searchable, with a form to try it. The page is an MCP client of the endpoint itself, so auth, allow-lists and rate limits apply to it as to any client.'
            ),
        path: urlPath('/catalog', 'Path of the catalog page; its files are served below it.'),
        serverName: z
            .string()
            .regex(/^[A-Za-z0-9_-]{1,64}$/, { message: 'must be 1 to 64 letters, digits, "_" or "-" (the name MCP clients give this gateway in their config)' })
            .default('prompts')
            .describe(
                'The name MCP clients give this gateway in their config (the README uses "prompts"): the catalog\'s copy buttons write /mcp__<serverName>__<prompt> for Claude Code and /mcp.<serverName>.<prompt> for VS Code.'
            )
    })
    .prefault({})
    .describe('A page on the MCP listener to browse, search and try the prompts a client may use (no external resources).');

/** The OTel sampler names (OTEL_TRACES_SAMPLER), but the Jaeger remote sampler. */
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
/** Bounds of the span queue (and batch) and of one export, the OTEL_BSP_* / OTEL_EXPORTER_OTLP_*TIMEOUT variables' too. */
export const MAX_SPAN_QUEUE = 1_000_000;
export const MAX_EXPORT_TIMEOUT_MS = 600_000;
export const OTLP_PROTOCOL_FIX = 'use "http/protobuf" (or "http/json") and the collector\'s OTLP/HTTP port, 4318; OTLP over gRPC is not supported';

const tracingSchema = z
    .strictObject({
        enabled: z
            .boolean()
            .optional()
            .describe(
                'Export traces (OpenTelemetry, OTLP over HTTP). Default: on when the standard environment asks for it (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER=otlp) and not OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. Set here, it wins over the environment.'
            ),
        endpoint: z
            .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
            .optional()
            .describe(
                'The collector\'s OTLP/HTTP base URL, e.g. "http://otel-collector:4318" (traces go to <endpoint>/v1/traces). Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318.'
            ),
        protocol: z
            .enum(OTLP_PROTOCOLS, { error: `must be "http/protobuf" or "http/json": ${OTLP_PROTOCOL_FIX}` })
            .optional()
            .describe('OTLP encoding. Default: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL, else "http/protobuf".'),
        serviceName: z.string().min(1).optional().describe('service.name of the spans. Default: OTEL_SERVICE_NAME, else "mcp-prompt-gateway".'),
        sampler: z.enum(TRACE_SAMPLERS).optional().describe('Which traces are recorded (the OTel sampler names). Default: OTEL_TRACES_SAMPLER, else "parentbased_always_on".'),
        samplerArg: z.number().min(0).max(1).optional().describe('The ratio of the *traceidratio samplers (0 to 1). Default: OTEL_TRACES_SAMPLER_ARG, else 1.'),
        headers: z
            .record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { message: 'must be an HTTP header name' }), plainValue)
            .optional()
            .describe(
                'Headers sent to the collector (e.g. an API key: use "${VAR}" to keep it out of the file; never logged). Default: OTEL_EXPORTER_OTLP_TRACES_HEADERS and OTEL_EXPORTER_OTLP_HEADERS.'
            ),
        maxQueueSize: z
            .number()
            .int()
            .min(1)
            .max(MAX_SPAN_QUEUE)
            .optional()
            .describe('Spans kept for export at most; more are dropped while the collector is slow or away. Default: OTEL_BSP_MAX_QUEUE_SIZE, else 2048.'),
        exportTimeoutMs: z
            .number()
            .int()
            .min(1)
            .max(MAX_EXPORT_TIMEOUT_MS)
            .optional()
            .describe('How long one export to the collector may take, retries included. Default: OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, OTEL_EXPORTER_OTLP_TIMEOUT, else 10000.')
    })
    .prefault({})
    .describe('OpenTelemetry traces of every request (docs/observability.md#traces). Unset fields come from the standard OTEL_* environment.');

export const GatewayConfigSchema = z
    .strictObject({
        $schema: z.string().optional().describe('Editor hint: path or URL of this JSON Schema.'),
        listen: listenSchema.describe('Where the Streamable HTTP endpoint listens.'),
        namespace: z
            .strictObject({
                separator: z.string().min(1).max(8).default('__').describe('Put between the upstream id and the prompt name. Must not occur in any upstream id.')
            })
            .prefault({})
            .describe('How exposed prompt names are built.'),
        pagination: z
            .strictObject({
                pageSize: z.number().int().min(1).max(1000).default(50).describe('Prompts per prompts/list page (1-1000).')
            })
            .prefault({}),
        cursorSecret: z
            .string()
            .default('')
            .describe(
                'Secret from which the key that encrypts and authenticates pagination cursors is derived (at least 16 characters). Empty: a random key per process, so cursors do not survive a restart and differ between replicas.'
            ),
        notifications: z
            .strictObject({
                debounceMs: z.number().int().min(0).max(60_000).default(250).describe('Quiet time that ends a burst of upstream changes.'),
                maxDelayMs: z.number().int().min(0).max(600_000).default(2000).describe('Longest wait between the first change of a burst and the notification.')
            })
            .prefault({})
            .describe('Coalescing of notifications/prompts/list_changed sent to clients.'),
        caching: z
            .strictObject({
                listTtlMs: z
                    .number()
                    .int()
                    .min(0)
                    .max(86_400_000)
                    .default(60_000)
                    .describe(
                        'ttlMs on prompts/list pages for 2026-07-28 clients: how long a client may reuse a page without asking again. The gateway re-reads an upstream when it announces a change and tells subscribed clients at once (subscriptions/listen), which invalidates earlier; 0: ask every time.'
                    ),
                discoverTtlMs: z
                    .number()
                    .int()
                    .min(0)
                    .max(86_400_000)
                    .default(300_000)
                    .describe('ttlMs on server/discover results (versions and capabilities change only with a reload).'),
                relistIntervalMs: relistIntervalMs
                    .default(60_000)
                    .describe(
                        'How often the list of an upstream that cannot announce changes (no listChanged capability, or a 2026-07-28 upstream without an acknowledged subscriptions/listen) is read again; a change found is announced to the clients that see it. The ttlMs such a 2026-07-28 upstream gives takes its place. Upstreams that announce their changes are never read on a schedule. listTtlMs is never longer than the gateway can vouch for.'
                    ),
                minRelistIntervalMs: z
                    .number()
                    .int()
                    .min(100)
                    .max(3_600_000)
                    .default(1000)
                    .describe('No upstream list is read on a schedule more often than this, whatever ttlMs the upstream gives (even 0).')
            })
            .prefault({})
            .describe('Caching hints for 2026-07-28 clients.'),
        subscriptions: z
            .strictObject({
                max: z.number().int().min(1).default(1000).describe('Most open subscriptions/listen streams (2026-07-28 clients); beyond it new ones get HTTP 503.'),
                maxPerClient: z
                    .number()
                    .int()
                    .min(1)
                    .default(16)
                    .describe('Most open subscriptions/listen streams per client (per address for the anonymous client); beyond it HTTP 429.')
            })
            .prefault({})
            .describe('Change notification streams of 2026-07-28 clients (subscriptions/listen).'),
        inputRequests: z
            .strictObject({
                answerTimeoutMs: z
                    .number()
                    .int()
                    .min(1000)
                    .max(1_800_000)
                    .default(60_000)
                    .describe(
                        "Longest wait for a client to answer one input request: a 2025 client's answer to elicitation/create, sampling/createMessage or roots/list, or a 2026-07-28 client's retry while the gateway holds a 2025 upstream's request open for it. The upstream's own timeout is paused meanwhile. 60 s is what 2025 SDK servers wait by default."
                    ),
                maxRounds: z
                    .number()
                    .int()
                    .min(1)
                    .max(100)
                    .default(10)
                    .describe(
                        "Most rounds of input one prompts/get may take (each input_required answered, each upstream request answered); beyond it the client gets -32603 and the upstream's request is cancelled."
                    ),
                maxPerRound: z
                    .number()
                    .int()
                    .min(1)
                    .max(64)
                    .default(8)
                    .describe(
                        "Most input requests in one round (the inputRequests of one input_required, or the requests a 2025 upstream has waiting at once); more is the upstream's fault."
                    ),
                maxTotalMs: z
                    .number()
                    .int()
                    .min(1000)
                    .max(3_600_000)
                    .default(600_000)
                    .describe('Longest one prompts/get may take in all once its upstream asks for input (every round, answers and upstream work included).'),
                maxHeld: z
                    .number()
                    .int()
                    .min(0)
                    .max(100_000)
                    .default(1000)
                    .describe(
                        'Most 2025 upstream requests held open here for 2026-07-28 clients to answer (each holds an upstream slot); beyond it such prompts get -32603 "too many questions waiting". 0: never hold (2026-07-28 clients then get -32603 for such prompts).'
                    ),
                maxHeldPerClient: z.number().int().min(1).max(10_000).default(16).describe('As maxHeld, per client (per address for the anonymous client).')
            })
            .superRefine((bounds, ctx) => {
                if (bounds.maxTotalMs < bounds.answerTimeoutMs) {
                    ctx.addIssue({
                        code: 'custom',
                        path: ['maxTotalMs'],
                        message: `must be at least inputRequests.answerTimeoutMs (${bounds.answerTimeoutMs}): one answer alone may take that long`
                    });
                }
            })
            .prefault({})
            .describe(
                'Prompts that ask the user something on their way (elicitation, sampling, roots): bridged between the eras (docs/protocol-revisions.md#input-requests-across-eras).'
            ),
        sessions: z
            .strictObject({
                idleTimeoutMs: z.number().int().min(1000).default(1_800_000).describe('An HTTP session with no request and no open stream for this long is closed.'),
                max: z.number().int().min(1).default(10_000).describe('Most concurrent HTTP sessions held by this process; beyond it new sessions get HTTP 503.'),
                maxLifetimeMs: z
                    .number()
                    .int()
                    .min(60_000)
                    .max(30 * 86_400_000)
                    .default(86_400_000)
                    .describe('Sealed into each session id: the session ends this long after initialize, however active (the client initializes again).'),
                secrets: z
                    .array(secretString('SESSION_SECRET'))
                    .max(8)
                    .default([])
                    .describe(
                        'With cluster: key ring for session ids, which carry the session sealed (AES-256-GCM) so that any replica sharing it can serve any session. Newest first: new sessions are sealed with the first, older ones are still opened until they expire; drop a secret once maxLifetimeMs has passed since it stopped being first. Empty: a key derived from cursorSecret (its own HKDF label). Without cluster, session ids are sealed with a key of the process and end with it.'
                    )
            })
            .prefault({}),
        cluster: z
            .strictObject({
                redis: z
                    .strictObject({
                        url: z
                            .string()
                            .regex(/^rediss?:\/\//, { message: 'must be a redis:// or rediss:// URL, e.g. "${REDIS_URL}" with redis://:password@redis:6379/0' })
                            .describe(
                                'Redis for the state replicas share: per-client rate limits and session quotas, ended sessions. Credentials in the URL are kept out of logs.'
                            ),
                        keyPrefix: z
                            .string()
                            .min(1)
                            .max(64)
                            .default('mcp-prompt-gateway:')
                            .describe('Put before every Redis key and channel, so gateways of different deployments can share one Redis.'),
                        commandTimeoutMs: z
                            .number()
                            .int()
                            .min(10)
                            .max(60_000)
                            .default(250)
                            .describe(
                                'A Redis command not answered within this is taken as Redis being away: the replica serves with its own limits until Redis answers again. Requests never wait longer than this on Redis. Raise it for a Redis far away or busy.'
                            )
                    })
                    .optional()
                    .describe('Without it every replica keeps its own limits and ended sessions (see the README, "Running several replicas").')
            })
            .optional()
            .describe('Set when several replicas serve one endpoint: cursorSecret becomes required, and idle sessions are not ended by one replica alone.'),
        auth: AuthSchema,
        clients: z.array(ClientSchema).default([]).describe('The clients allowed in, with their credentials and prompt policies.'),
        anonymous: z
            .strictObject({ prompts: PromptPolicySchema.describe('Prompts the anonymous client may use, by exposed name.') })
            .prefault({})
            .describe('The caller when auth.mode is "none", and a --stdio gateway without --client.'),
        prompts: PromptPolicySchema.describe("Prompts exposed to every client, by exposed name; applied before the client's own policy."),
        limits: LimitsSchema,
        reconnect,
        shutdownTimeoutMs: z
            .number()
            .int()
            .min(0)
            .max(600_000)
            .default(10_000)
            .describe('On SIGTERM/SIGINT: longest wait for requests in flight before sessions and upstreams are closed.'),
        reload: z
            .strictObject({
                watch: z.boolean().default(true).describe('Reload when the config file changes (SIGHUP always reloads).')
            })
            .prefault({})
            .describe('Hot reload of this file.'),
        upstreamConnectConcurrency: z.number().int().min(1).max(256).default(8).describe('How many upstreams connect at the same time.'),
        metrics: metricsSchema,
        dashboard: dashboardSchema,
        catalog: catalogSchema,
        log: z
            .strictObject({
                level: z.enum(LOG_LEVELS).default('info').describe('Log level; the LOG_LEVEL environment variable overrides it.'),
                format: z
                    .enum(LOG_FORMATS)
                    .default('auto')
                    .describe('"json": one JSON object per line. "pretty": readable, for people. "auto": pretty when stderr is a terminal. LOG_FORMAT overrides it.')
            })
            .prefault({}),
        tracing: tracingSchema,
        upstreams: z.array(UpstreamSchema).default([]).describe('The MCP servers behind the gateway, in order.'),
        upstreamsFrom: upstreamsFromSchema(importedUpstreamDefaults)
    })
    .superRefine((config, ctx) => {
        checkUpstreams(config, ctx);
        checkSecrets(config, ctx);
        checkPolicyConfig(config, ctx);
        checkServedPaths(config, ctx);
        checkNotificationTiming(config, ctx);
    });

export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

/** Each upstream: its id (unique, without the separator), overrides, reconnect and timeout bounds, and credentials. */
function checkUpstreams(config: Pick<GatewayConfig, 'upstreams' | 'upstreamsFrom' | 'namespace' | 'limits' | 'reconnect'>, ctx: z.RefinementCtx): void {
    if (config.upstreams.length === 0 && config.upstreamsFrom.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['upstreams'], message: 'add at least one upstream MCP server (or a client config file in upstreamsFrom)' });
    }
    const seen = new Map<string, number>();
    const namespacedIds = new Set(config.upstreams.filter(upstream => upstream.namespace).map(upstream => upstream.id));
    const { separator } = config.namespace;
    config.upstreams.forEach((upstream, index) => {
        const first = seen.get(upstream.id);
        if (first !== undefined) {
            ctx.addIssue({
                code: 'custom',
                path: ['upstreams', index, 'id'],
                message: `duplicate id "${upstream.id}" (also upstreams[${first}].id); give each upstream its own id`
            });
        } else {
            seen.set(upstream.id, index);
        }
        checkUpstreamId(separator, upstream.id, index, ctx);
        checkOverrides(upstream, { path: ['upstreams', index], separator, namespacedIds, maxArgumentBytes: config.limits.maxArgumentBytes }, ctx);
        if (upstream.transport !== 'files') checkServerUpstream(config.reconnect, upstream, index, ctx);
    });
}

function checkServerUpstream(reconnect: GatewayConfig['reconnect'], upstream: ServerUpstreamConfig, index: number, ctx: z.RefinementCtx): void {
    const backoff = resolveReconnect(reconnect, upstream);
    if (backoff.maxMs < backoff.initialMs) {
        ctx.addIssue({
            code: 'custom',
            path: upstream.reconnect?.maxMs === undefined ? ['reconnect', 'maxMs'] : ['upstreams', index, 'reconnect', 'maxMs'],
            message: `must be at least reconnect.initialMs (${backoff.initialMs}) for upstream "${upstream.id}"`
        });
    }
    if (upstream.maxTotalTimeoutMs !== undefined && upstream.maxTotalTimeoutMs < upstream.timeoutMs) {
        ctx.addIssue({
            code: 'custom',
            path: ['upstreams', index, 'maxTotalTimeoutMs'],
            message: `must be at least timeoutMs (${upstream.timeoutMs}) for upstream "${upstream.id}"`
        });
    }
    if (upstream.transport !== 'stdio') checkUpstreamAuth(upstream, ['upstreams', index], ctx);
}

/** cursorSecret and sessions.secrets. */
function checkSecrets(config: Pick<GatewayConfig, 'cursorSecret' | 'sessions' | 'cluster' | 'listen'>, ctx: z.RefinementCtx): void {
    if (config.cursorSecret !== '' && config.cursorSecret.length < 16) {
        ctx.addIssue({
            code: 'custom',
            path: ['cursorSecret'],
            message: 'must be at least 16 characters (or empty for a random per-process secret)'
        });
    }
    if (config.sessions.secrets.length > 0 && config.cluster === undefined) {
        ctx.addIssue({
            code: 'custom',
            path: ['sessions', 'secrets'],
            message: 'takes effect only with cluster set (sessions served by several replicas, or outliving a restart); add "cluster": {} or remove it'
        });
    }
    const missingSecret = missingCursorSecret(config);
    if (missingSecret !== undefined) ctx.addIssue({ code: 'custom', path: ['cursorSecret'], message: missingSecret });
}

function checkNotificationTiming(config: Pick<GatewayConfig, 'notifications'>, ctx: z.RefinementCtx): void {
    if (config.notifications.maxDelayMs < config.notifications.debounceMs) {
        ctx.addIssue({
            code: 'custom',
            path: ['notifications', 'maxDelayMs'],
            message: 'must be at least notifications.debounceMs'
        });
    }
}

function checkUpstreamId(separator: string, id: string, index: number, ctx: z.RefinementCtx): void {
    if (!id.includes(separator)) return;
    ctx.addIssue({
        code: 'custom',
        path: ['upstreams', index, 'id'],
        message: `contains the namespace separator "${separator}"; rename the upstream or change namespace.separator`
    });
}

/**
 * Why an empty cursorSecret is refused, if it is: a random per-process key breaks cursors and sessions between
 * replicas and across restarts, which a gateway reachable from elsewhere, or one of several, cannot afford. (Also
 * checked after `--host`, which may move a config off loopback.)
 */
export function missingCursorSecret(config: Pick<GatewayConfig, 'cursorSecret' | 'cluster' | 'listen'>): string | undefined {
    if (config.cursorSecret !== '' || (config.cluster === undefined && isLoopback(config.listen.host))) return undefined;
    const why = config.cluster === undefined ? `listen.host (${config.listen.host}) is not a loopback address` : 'cluster is set';
    return `is required when ${why}: every replica and restart must share it, or cursors and sessions break between them; set "\${CURSOR_SECRET}" and a long random value`;
}

const HEALTH_PATHS = ['/healthz', '/readyz'];

/**
 * Paths served by one HTTP server must not shadow each other. The MCP listener serves listen.path, the health checks
 * and the catalog, and metrics and the dashboard unless metrics.listen gives them (and health checks) a listener of
 * their own. Paths are compared as they are routed: in any case, without one trailing slash.
 */
function checkServedPaths(config: Pick<GatewayConfig, 'listen' | 'metrics' | 'dashboard' | 'catalog'>, ctx: z.RefinementCtx): void {
    const listener = () => new Map<string, string>(HEALTH_PATHS.map(path => [path, 'the health checks']));
    const mcpListener = listener();
    const operatorListener = config.metrics.listen === undefined ? mcpListener : listener();
    /** False, with the issue, when another field has the path. */
    const claim = (taken: Map<string, string>, path: string, field: string): boolean => {
        const key = routeKey(path);
        const owner = taken.get(key);
        if (owner === undefined) {
            taken.set(key, field);
            return true;
        }
        ctx.addIssue({ code: 'custom', path: field.split('.'), message: `"${path}" is already used by ${owner}; pick another path` });
        return false;
    };
    claim(mcpListener, config.listen.path, 'listen.path');
    if (config.metrics.enabled) claim(operatorListener, config.metrics.path, 'metrics.path');
    if (config.dashboard.enabled !== false) {
        claim(operatorListener, config.dashboard.path, 'dashboard.path');
        claim(operatorListener, `${pathBase(config.dashboard.path)}/data`, 'dashboard.path');
    }
    // The catalog's page and every path below it (its files, whatever they are): one issue at most.
    if (config.catalog.enabled && claim(mcpListener, config.catalog.path, 'catalog.path')) {
        const below = `${routeKey(pathBase(config.catalog.path))}/`;
        const taken = [...mcpListener].find(([key]) => key.startsWith(below));
        if (taken !== undefined) {
            ctx.addIssue({
                code: 'custom',
                path: ['catalog', 'path'],
                message: `the catalog serves its files below "${config.catalog.path}", where ${taken[1]} is; pick another path`
            });
        }
    }
}
export type ReconnectPolicy = GatewayConfig['reconnect'];

const DEFAULT_MAX_TOTAL_TIMEOUT_MS = 300_000;

/** The bound on a request that makes progress (a timeoutMs above the default raises the default with it). */
export function maxTotalTimeout(upstream: Pick<ServerUpstreamConfig, 'timeoutMs' | 'maxTotalTimeoutMs'>): number {
    return upstream.maxTotalTimeoutMs ?? Math.max(DEFAULT_MAX_TOTAL_TIMEOUT_MS, upstream.timeoutMs);
}

/** The upstream's own reconnect settings over the global ones. */
export function resolveReconnect(global: ReconnectPolicy, upstream: Pick<ServerUpstreamConfig, 'reconnect'>): ReconnectPolicy {
    return { initialMs: upstream.reconnect?.initialMs ?? global.initialMs, maxMs: upstream.reconnect?.maxMs ?? global.maxMs };
}
export type UpstreamConfig = z.infer<typeof UpstreamSchema>;
export type { AuthConfig } from './policy-schema.js';
export type StdioUpstreamConfig = z.infer<typeof StdioUpstreamSchema>;
export type FilesUpstreamConfig = z.infer<typeof FilesUpstreamSchema>;
/** An upstream MCP server, which the gateway connects to. */
export type ServerUpstreamConfig = Exclude<UpstreamConfig, FilesUpstreamConfig>;
export type HttpUpstreamConfig = Exclude<ServerUpstreamConfig, StdioUpstreamConfig>;
