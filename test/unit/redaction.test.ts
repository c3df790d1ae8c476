import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { configSecrets } from '../../src/config/secrets.js';
import { createLogger, setLogSecrets } from '../../src/diagnostics/logger.js';
import { Redactor, setLearnedSecrets } from '../../src/diagnostics/redaction.js';

function configWith(extra: Record<string, unknown>) {
    return parseConfig(JSON.stringify({ upstreams: [{ id: 'x', transport: 'stdio', command: 'true' }], ...extra }), 'test config', {});
}

describe('configSecrets', () => {
    test('header and env values, Bearer and Basic tokens, URL passwords, auth.secret, cursorSecret, metrics.bearerToken', () => {
        const config = configWith({
            cursorSecret: 'cursor-secret-0123456789',
            auth: { mode: 'jwt', secret: 'j'.repeat(32) },
            clients: [{ id: 'c', apiKey: 'client-api-key-0123456789' }],
            metrics: { bearerToken: 'metrics-token-0123456789' },
            upstreams: [
                { id: 'a', transport: 'stdio', command: 'true', env: { TOKEN: 'env-token-value', SHORT: 'abc' } },
                { id: 'b', transport: 'http', url: 'https://user:p%40ss-word@example.com/mcp', headers: { Authorization: 'Bearer bearer-token-123', Accept: 'text/plain' } },
                { id: 'c', transport: 'sse', url: 'https://example.com/sse', headers: { Authorization: 'Basic dXNlcjpwYXNzd29yZA==' } }
            ]
        });
        const secrets = configSecrets(config);
        for (const expected of [
            'env-token-value',
            'Bearer bearer-token-123',
            'bearer-token-123',
            'text/plain',
            'p%40ss-word',
            'p@ss-word',
            Buffer.from('user:p@ss-word').toString('base64'),
            'Basic dXNlcjpwYXNzd29yZA==',
            'dXNlcjpwYXNzd29yZA==',
            'j'.repeat(32),
            'cursor-secret-0123456789',
            'metrics-token-0123456789'
        ]) {
            assert.ok(secrets.includes(expected), expected);
        }
        assert.ok(!secrets.includes('abc'), 'values under 8 characters would match ordinary words');
        assert.ok(!JSON.stringify(config).includes('client-api-key-0123456789'), 'client API keys are hashed at load, not kept');
    });

    test('a password that is not valid percent-encoding is taken as written, and settings-like env values are kept', () => {
        const config = configWith({
            upstreams: [
                { id: 'a', transport: 'http', url: 'https://user:50%off-sale@example.com/mcp' },
                { id: 'b', transport: 'stdio', command: 'true', env: { PATH: '/opt/tools/bin:/usr/bin', API_TOKEN: 'stdio-api-token-1' } }
            ]
        });
        const secrets = configSecrets(config);
        assert.ok(secrets.includes('50%off-sale'));
        assert.ok(secrets.includes(Buffer.from('user:50%off-sale').toString('base64')), 'the Basic credentials sent for it');
        assert.ok(secrets.includes('stdio-api-token-1'));
        assert.ok(!secrets.includes('/opt/tools/bin:/usr/bin'), 'PATH is a setting: a missing command names the PATH it searched');
    });
});

describe('configSecrets: the collector of traces', () => {
    test("tracing.headers values (and a Bearer token's), the endpoint's password, and a ${X} expanded into them are secrets everywhere", () => {
        const env = { OTLP_KEY: 'otlp-api-key-0123456789' };
        const config = parseConfig(
            JSON.stringify({
                tracing: {
                    endpoint: 'https://tenant:collector-pass-word@otel.example.com:4318',
                    headers: { 'x-honeycomb-team': '${OTLP_KEY}', authorization: 'Bearer otlp-bearer-token-1' }
                },
                // The same variable in an upstream's argv: printed when the server echoes it, so it must be redacted there too.
                upstreams: [{ id: 'a', transport: 'stdio', command: 'true', args: ['--key=${OTLP_KEY}'] }]
            }),
            'test config',
            env
        );
        const secrets = configSecrets(config);
        for (const expected of ['otlp-api-key-0123456789', 'Bearer otlp-bearer-token-1', 'otlp-bearer-token-1', 'collector-pass-word']) {
            assert.ok(secrets.includes(expected), expected);
        }
    });
    test('OTEL_EXPORTER_OTLP_HEADERS / _TRACES_HEADERS values and the OTEL_* endpoint password are secrets, in the log too', () => {
        const env = {
            OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=env-team-key-0123456789, authorization=Bearer%20env-bearer-token-1',
            OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'dd-api-key=traces%2Fkey%3D0123456789',
            OTEL_EXPORTER_OTLP_ENDPOINT: 'https://tenant:env-endpoint-pass@otel.example.com:4318',
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tenant:env-traces-pass@otel.example.com/v1/traces',
            OTEL_SERVICE_NAME: 'not-a-secret-service'
        };
        const config = parseConfig(JSON.stringify({ upstreams: [{ id: 'x', transport: 'stdio', command: 'true' }] }), 'test config', env);
        const secrets = configSecrets(config);
        const expected = [
            'env-team-key-0123456789',
            'Bearer env-bearer-token-1',
            'env-bearer-token-1',
            'traces%2Fkey%3D0123456789',
            'traces/key=0123456789',
            'env-endpoint-pass',
            'env-traces-pass'
        ];
        for (const value of expected) assert.ok(secrets.includes(value), value);
        assert.ok(!secrets.includes('not-a-secret-service'));
        const written: string[] = [];
        const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (written.push(chunk.toString()), done()) });
        const logger = createLogger({ level: 'info', format: 'json', destination: sink, secrets });
        logger.info({ headers: env.OTEL_EXPORTER_OTLP_HEADERS }, `collector ${env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}`);
        for (const value of expected) assert.ok(!written.join('').includes(value), value);
    });
});

describe('secret expansions', () => {
    test("the gateway config's ${X} is a secret where it went into a secret value, and then everywhere; elsewhere it is not", () => {
        const env = { KEY: 'expanded-key-0123456789', HOST: '127.0.0.1', TOOLS: '/opt/tools-folder', SHORT: 'argv', HOME: '/home/operator' };
        const config = parseConfig(
            JSON.stringify({
                listen: { host: '${HOST}' },
                upstreams: [
                    {
                        id: 'a',
                        transport: 'stdio',
                        command: '${TOOLS}/server',
                        args: ['--key=${KEY}', '${SHORT}'],
                        env: { AUTH_LINE: 'key ${KEY}', MODE: '${SHORT}', DATA: '${HOME}/data' }
                    },
                    { id: 'b', transport: 'http', url: 'https://example.com/mcp', headers: { 'X-Api-Key': 'v1:${KEY}' } }
                ]
            }),
            'test config',
            env
        );
        const secrets = configSecrets(config);
        assert.ok(secrets.includes('expanded-key-0123456789'), 'alone, as it appears in the args');
        assert.ok(secrets.includes('key expanded-key-0123456789'), 'the env value as before');
        assert.ok(!secrets.includes('/opt/tools-folder'), 'a command path is no secret field');
        assert.ok(!secrets.includes('argv'), 'under the minimum length');
        assert.ok(!secrets.includes('127.0.0.1'), 'listen.host is no secret field');
        assert.ok(secrets.includes('/home/operator/data') && !secrets.includes('/home/operator'), 'HOME is a setting: the env value is a secret, HOME is not');
        assert.deepEqual(configSecrets({ ...config }), secrets, 'copies of the config keep them');
        assert.deepEqual(Object.keys(parseConfig(JSON.stringify(config), 'copy', {})), Object.keys(config), 'no field of the config holds them');
    });
});

describe('Redactor', () => {
    test('every occurrence, longest value first, also in its JSON-escaped form', () => {
        const redactor = new Redactor(['token-0123456789', 'Bearer token-0123456789', 'quote"and\\slash']);
        assert.equal(redactor.redact('a Bearer token-0123456789 and token-0123456789'), 'a [redacted] and [redacted]');
        assert.equal(redactor.redact(JSON.stringify({ msg: 'has quote"and\\slash inside' })), '{"msg":"has [redacted] inside"}');
        assert.equal(redactor.redact('nothing here'), 'nothing here');
    });

    test('regular-expression characters in a value are plain text', () => {
        const redactor = new Redactor(['a.b*c+(d)?[e]{2}|$^']);
        assert.equal(redactor.redact('x a.b*c+(d)?[e]{2}|$^ y aXbbc'), 'x [redacted] y aXbbc');
    });

    test('secrets learned at run time are redacted by every redactor until their owner forgets them', () => {
        const owner = {};
        const redactor = new Redactor(['configured-secret']);
        setLearnedSecrets(owner, ['issued-access-token', 'previous-access-token']);
        assert.equal(redactor.redact('configured-secret issued-access-token previous-access-token'), '[redacted] [redacted] [redacted]');
        assert.equal(new Redactor().redact('issued-access-token'), '[redacted]');
        setLearnedSecrets(owner, []);
        assert.equal(redactor.redact('configured-secret issued-access-token'), '[redacted] issued-access-token');
    });

    test('redactValues: every string of a JSON-like value, keys kept, nothing copied when there is nothing to redact', () => {
        const redactor = new Redactor(['a-secret-value']);
        const value = { upstreams: [{ id: 'u', error: 'failed: a-secret-value/bin not found', count: 3, ok: true, none: null }], 'a-secret-value': 'key' };
        assert.deepEqual(redactor.redactValues(value), {
            upstreams: [{ id: 'u', error: 'failed: [redacted]/bin not found', count: 3, ok: true, none: null }],
            'a-secret-value': 'key'
        });
        assert.equal(new Redactor().redactValues(value), value);
    });

    test('update replaces the values; none at all leaves lines untouched', () => {
        const redactor = new Redactor(['first-secret-value']);
        redactor.update(['second-secret-value']);
        assert.equal(redactor.redact('first-secret-value second-secret-value'), 'first-secret-value [redacted]');
        redactor.update([]);
        assert.equal(redactor.redact('second-secret-value'), 'second-secret-value');
    });
});

describe('the logger', () => {
    test('redacts the secrets it is given from every line, message, fields and nested objects alike', () => {
        const written: string[] = [];
        const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (written.push(chunk.toString()), done()) });
        const logger = createLogger({ level: 'debug', format: 'json', destination: sink, secrets: ['first-secret-value'] });
        logger.child({ upstream: 'u' }).info({ detail: { quoted: 'first-secret-value' } }, 'saw first-secret-value');
        setLogSecrets(logger, ['second-secret-value']);
        logger.warn('saw first-secret-value and second-secret-value');
        const [first, second] = written.map(line => JSON.parse(line) as Record<string, unknown>);
        assert.equal(first?.msg, 'saw [redacted]');
        assert.deepEqual(first?.detail, { quoted: '[redacted]' });
        assert.equal(second?.msg, 'saw first-secret-value and [redacted]');
    });
});
