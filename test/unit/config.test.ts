import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, formatPath } from '../../src/config/issues.js';
import { parseConfig } from '../../src/config/load.js';
import { configError, lineFor } from './config-assert.js';

const SOURCE = 'gateway.test.json';
const STDIO = { id: 'local', transport: 'stdio', command: 'node' };
const HTTP = { id: 'remote', transport: 'streamable-http', url: 'https://mcp.example.org/mcp' };

const json = (document: unknown): string => JSON.stringify(document);

const rejects = (text: string, env: Record<string, string> = {}): ConfigError => configError(() => parseConfig(text, SOURCE, env));

describe('formatPath', () => {
    test('identifiers are joined with dots and indexes are bracketed', () => {
        assert.equal(formatPath(['upstreams', 0, 'headers', 'Authorization']), 'upstreams[0].headers.Authorization');
    });

    test('keys that are not identifiers are quoted', () => {
        assert.equal(formatPath(['upstreams', 1, 'headers', 'x.y z']), 'upstreams[1].headers["x.y z"]');
        assert.equal(formatPath(['env', '1abc']), 'env["1abc"]');
        assert.equal(formatPath(['a"b']), '["a\\"b"]');
    });

    test('header-style names with dashes need no quotes', () => {
        assert.equal(formatPath(['headers', 'X-Api-Key']), 'headers.X-Api-Key');
    });

    test('a path that starts with an index', () => {
        assert.equal(formatPath([2, 'id']), '[2].id');
    });

    test('the empty path is the top level', () => {
        assert.equal(formatPath([]), '(top level)');
    });

    test('symbols are rendered, not thrown on', () => {
        assert.equal(formatPath([Symbol('s')]), '["Symbol(s)"]');
    });
});

describe('ConfigError', () => {
    test('lists every issue with its path, and names the source', () => {
        const error = new ConfigError('my.json', [
            { path: ['upstreams', 0, 'id'], message: 'first problem' },
            { path: [], message: 'second problem' }
        ]);
        assert.equal(error.name, 'ConfigError');
        assert.ok(error instanceof Error);
        assert.match(error.message, /my\.json/);
        assert.equal(lineFor(error, 'upstreams[0].id'), '  - upstreams[0].id: first problem');
        assert.equal(lineFor(error, '(top level)'), '  - (top level): second problem');
        assert.equal(error.issues.length, 2);
    });
});

describe('parseConfig: valid configs', () => {
    test('a minimal config gets the documented defaults', () => {
        const config = parseConfig(json({ upstreams: [STDIO] }), SOURCE, {});
        assert.equal(config.listen.port, 8080);
        assert.equal(config.listen.host, '127.0.0.1');
        assert.equal(config.listen.path, '/mcp');
        assert.equal(config.namespace.separator, '__');
        assert.equal(config.pagination.pageSize, 50);
        assert.equal(config.cursorSecret, '');
        assert.ok(config.notifications.maxDelayMs >= config.notifications.debounceMs);
        const [upstream] = config.upstreams;
        assert.equal(upstream?.namespace, true);
        assert.equal(upstream?.transport === 'stdio' ? upstream.timeoutMs : undefined, 10_000);
        assert.deepEqual(upstream?.transport === 'stdio' ? upstream.args : undefined, []);
    });

    test('given values override the defaults', () => {
        const config = parseConfig(json({ listen: { port: 0 }, pagination: { pageSize: 1000 }, upstreams: [HTTP] }), SOURCE, {});
        assert.equal(config.listen.port, 0);
        assert.equal(config.listen.host, '127.0.0.1');
        assert.equal(config.pagination.pageSize, 1000);
    });

    test('environment variables are substituted before validation', () => {
        const config = parseConfig(
            json({ cursorSecret: '${SECRET}', upstreams: [{ ...HTTP, url: '${URL:-http://localhost:3000/mcp}', headers: { Authorization: 'Bearer ${TOKEN}' } }] }),
            SOURCE,
            { SECRET: 'x'.repeat(32), TOKEN: 'abc' }
        );
        assert.equal(config.cursorSecret, 'x'.repeat(32));
        const [upstream] = config.upstreams;
        assert.ok(upstream !== undefined && upstream.transport !== 'stdio' && upstream.transport !== 'files');
        assert.equal(upstream.url, 'http://localhost:3000/mcp');
        assert.deepEqual(upstream.headers, { Authorization: 'Bearer abc' });
    });

    test('all four transports are accepted', () => {
        const config = parseConfig(
            json({
                upstreams: [STDIO, { ...HTTP, id: 'a', transport: 'streamable-http' }, { ...HTTP, id: 'b', transport: 'sse' }, { ...HTTP, id: 'c', transport: 'http' }]
            }),
            SOURCE,
            {}
        );
        assert.deepEqual(
            config.upstreams.map(upstream => upstream.transport),
            ['stdio', 'streamable-http', 'sse', 'http']
        );
    });
});

describe('parseConfig: errors name the path and say what to do', () => {
    test('an upstream id with capitals and underscores', () => {
        const error = rejects(json({ upstreams: [{ ...STDIO, id: 'Bad_Id' }] }));
        assert.match(lineFor(error, 'upstreams[0].id'), /lowercase letters, digits and "-"/);
        assert.match(error.message, new RegExp(SOURCE.replace('.', '\\.')));
    });

    test('duplicate upstream ids point at the second one and mention the first', () => {
        const error = rejects(json({ upstreams: [STDIO, HTTP, { ...HTTP, id: 'local' }] }));
        const line = lineFor(error, 'upstreams[2].id');
        assert.match(line, /duplicate/);
        assert.match(line, /upstreams\[0\]\.id/);
        assert.match(line, /give each upstream its own id/);
    });

    test('the namespace separator inside an id', () => {
        const error = rejects(json({ namespace: { separator: '--' }, upstreams: [STDIO, { ...HTTP, id: 'my--server' }] }));
        const line = lineFor(error, 'upstreams[1].id');
        assert.match(line, /separator/);
        assert.match(line, /rename the upstream or change namespace\.separator/);
    });

    test('the default separator inside an id cannot happen, but a one-character separator can', () => {
        const error = rejects(json({ namespace: { separator: '-' }, upstreams: [{ ...STDIO, id: 'a-b' }] }));
        assert.match(lineFor(error, 'upstreams[0].id'), /separator/);
    });

    test('metrics and dashboard paths that would shadow each other or the MCP endpoint', () => {
        const onMcp = rejects(json({ metrics: { path: '/mcp' }, upstreams: [STDIO] }));
        assert.match(lineFor(onMcp, 'metrics.path'), /"\/mcp" is already used by listen\.path; pick another path/);
        const onHealth = rejects(json({ dashboard: { path: '/healthz' }, upstreams: [STDIO] }));
        assert.match(lineFor(onHealth, 'dashboard.path'), /already used by the health checks/);
        const onEachOther = rejects(json({ metrics: { path: '/ops/data' }, dashboard: { path: '/ops' }, upstreams: [STDIO] }));
        assert.match(lineFor(onEachOther, 'dashboard.path'), /"\/ops\/data" is already used by metrics\.path/);
        // On a listener of their own, the MCP path is free to take; turned off, nothing is claimed.
        parseConfig(JSON.stringify({ metrics: { path: '/mcp', listen: { port: 0 } }, upstreams: [STDIO] }), SOURCE, {});
        parseConfig(JSON.stringify({ metrics: { enabled: false, path: '/mcp' }, dashboard: { enabled: false, path: '/mcp' }, upstreams: [STDIO] }), SOURCE, {});
    });

    test('a metrics bearer token that is short or could not travel in a header', () => {
        assert.match(lineFor(rejects(json({ metrics: { bearerToken: 'short' }, upstreams: [STDIO] })), 'metrics.bearerToken'), /at least 16 characters/);
        const spaced = rejects(json({ metrics: { bearerToken: 'has a space in it, 0123456789' }, upstreams: [STDIO] }));
        assert.match(lineFor(spaced, 'metrics.bearerToken'), /printable ASCII without spaces/);
        assert.ok(!spaced.message.includes('has a space in it'), 'the token is not echoed');
    });

    test('an unknown key at the top level', () => {
        const error = rejects(json({ upstreams: [STDIO], pagesize: 10 }));
        const line = lineFor(error, '(top level)');
        assert.match(line, /unknown key "pagesize"/);
        assert.match(line, /remove it or fix the spelling/);
    });

    test('an unknown key inside an upstream', () => {
        const error = rejects(json({ upstreams: [STDIO, { ...HTTP, header: {} }] }));
        const line = lineFor(error, 'upstreams[1]');
        assert.match(line, /unknown key "header"; did you mean "headers"\?/);
    });

    test('an http-only key on a stdio upstream is unknown', () => {
        const error = rejects(json({ upstreams: [{ ...STDIO, url: 'http://x/' }] }));
        assert.match(lineFor(error, 'upstreams[0]'), /unknown key "url"/);
    });

    test('a missing transport', () => {
        const { transport: _omitted, ...withoutTransport } = STDIO;
        const error = rejects(json({ upstreams: [withoutTransport] }));
        assert.match(lineFor(error, 'upstreams[0].transport'), /"stdio", "streamable-http", "sse", "http" or "files"/);
    });

    test('an unknown transport', () => {
        const error = rejects(json({ upstreams: [{ ...HTTP, transport: 'websocket' }] }));
        assert.match(lineFor(error, 'upstreams[0].transport'), /use "stdio", "streamable-http", "sse", "http" or "files"/);
    });

    for (const url of ['ftp://example.org/mcp', 'file:///etc/passwd', 'example.org/mcp', 'not a url']) {
        test(`a non-http URL: ${url}`, () => {
            const error = rejects(json({ upstreams: [{ ...HTTP, url }] }));
            assert.match(lineFor(error, 'upstreams[0].url'), /http:\/\/ or https:\/\//);
        });
    }

    test('pageSize 0', () => {
        const error = rejects(json({ pagination: { pageSize: 0 }, upstreams: [STDIO] }));
        assert.match(lineFor(error, 'pagination.pageSize'), /at least 1/);
    });

    test('pageSize 1001', () => {
        const error = rejects(json({ pagination: { pageSize: 1001 }, upstreams: [STDIO] }));
        assert.match(lineFor(error, 'pagination.pageSize'), /at most 1000/);
    });

    test('a cursorSecret shorter than 16 characters', () => {
        const error = rejects(json({ cursorSecret: 'x'.repeat(15), upstreams: [STDIO] }));
        const line = lineFor(error, 'cursorSecret');
        assert.match(line, /at least 16/);
        assert.match(line, /empty/);
        assert.doesNotThrow(() => parseConfig(json({ cursorSecret: 'x'.repeat(16), upstreams: [STDIO] }), SOURCE, {}));
    });

    test('no cursorSecret where replicas or restarts must share it: a non-loopback listener, or cluster set', () => {
        const exposed = lineFor(rejects(json({ listen: { host: '0.0.0.0' }, upstreams: [STDIO] })), 'cursorSecret');
        assert.match(exposed, /required when listen\.host \(0\.0\.0\.0\) is not a loopback address/);
        assert.match(exposed, /\$\{CURSOR_SECRET\}/, 'says how to fix it');
        assert.match(lineFor(rejects(json({ cluster: {}, upstreams: [STDIO] })), 'cursorSecret'), /required when cluster is set/);
        assert.doesNotThrow(() => parseConfig(json({ listen: { host: '0.0.0.0' }, cursorSecret: 'x'.repeat(16), upstreams: [STDIO] }), SOURCE, {}));
        assert.doesNotThrow(() => parseConfig(json({ listen: { host: '127.0.0.2' }, upstreams: [STDIO] }), SOURCE, {}), 'loopback: one process');
    });

    test('sessions.secrets shorter than 16 characters, and a cluster.redis.url that is no Redis URL', () => {
        assert.match(lineFor(rejects(json({ sessions: { secrets: ['short'] }, upstreams: [STDIO] })), 'sessions.secrets[0]'), /at least 16 characters.*SESSION_SECRET/);
        const alone = rejects(json({ sessions: { secrets: ['x'.repeat(16)] }, upstreams: [STDIO] }));
        assert.match(lineFor(alone, 'sessions.secrets'), /only with cluster set.*add "cluster": \{\}/);
        const redis = rejects(json({ cursorSecret: 'x'.repeat(16), cluster: { redis: { url: 'http://redis:6379' } }, upstreams: [STDIO] }));
        assert.match(lineFor(redis, 'cluster.redis.url'), /redis:\/\/ or rediss:\/\//);
    });

    test('cluster.redis.commandTimeoutMs: 250 unless set, from 10 to 60,000', () => {
        const cluster = (redis: Record<string, unknown>) => json({ cursorSecret: 'x'.repeat(16), cluster: { redis: { url: 'redis://redis:6379', ...redis } }, upstreams: [STDIO] });
        assert.equal(parseConfig(cluster({}), SOURCE, {}).cluster?.redis?.commandTimeoutMs, 250);
        assert.equal(parseConfig(cluster({ commandTimeoutMs: 2000 }), SOURCE, {}).cluster?.redis?.commandTimeoutMs, 2000);
        assert.match(lineFor(rejects(cluster({ commandTimeoutMs: 5 })), 'cluster.redis.commandTimeoutMs'), /10/);
        assert.match(lineFor(rejects(cluster({ commandTimeoutMs: 120_000 })), 'cluster.redis.commandTimeoutMs'), /60000/);
    });

    test('an unset environment variable in a header', () => {
        const error = rejects(json({ upstreams: [{ ...HTTP, headers: { Authorization: 'Bearer ${API_TOKEN}' } }] }));
        const line = lineFor(error, 'upstreams[0].headers.Authorization');
        assert.match(line, /API_TOKEN/);
        assert.match(line, /set it, or give a default/);
    });

    test('invalid JSON', () => {
        const error = rejects('{ "upstreams": [ }');
        assert.match(lineFor(error, '(top level)'), /not valid JSON/);
    });

    test('no upstreams', () => {
        assert.match(lineFor(rejects(json({ upstreams: [] })), 'upstreams'), /add at least one upstream/);
        // Upstreams may come from client config files instead (upstreamsFrom): the message says so.
        assert.match(lineFor(rejects(json({})), 'upstreams'), /add at least one upstream MCP server \(or a client config file in upstreamsFrom\)/);
    });

    test('several problems are all reported at once', () => {
        const error = rejects(json({ pagination: { pageSize: 0 }, upstreams: [{ ...STDIO, id: 'Bad_Id' }] }));
        lineFor(error, 'pagination.pageSize');
        lineFor(error, 'upstreams[0].id');
    });

    test('a value of the wrong type is reported as such, not as missing', () => {
        const error = rejects(json({ listen: { port: '8080' }, upstreams: [STDIO] }));
        const line = lineFor(error, 'listen.port');
        assert.doesNotMatch(line, /required/);
        assert.match(line, /expected number, got a string/);
    });

    test('a missing required field is reported as missing', () => {
        const { command: _omitted, ...withoutCommand } = STDIO;
        assert.match(lineFor(rejects(json({ upstreams: [withoutCommand] })), 'upstreams[0].command'), /is required/);
    });
});

describe('parseConfig: secrets stay out of error messages', () => {
    const SECRET = 'hunter2-TOP-SECRET-VALUE';
    const env = { SECRET };

    const cases: [string, unknown, string][] = [
        ['a string where a number is expected', { listen: { port: '${SECRET}' }, upstreams: [STDIO] }, 'listen.port'],
        ['a bad URL', { upstreams: [{ ...HTTP, url: '${SECRET}' }] }, 'upstreams[0].url'],
        ['a bad listen path', { listen: { path: '${SECRET}' }, upstreams: [STDIO] }, 'listen.path'],
        ['a bad log level', { log: { level: '${SECRET}' }, upstreams: [STDIO] }, 'log.level'],
        ['a bad transport', { upstreams: [{ ...STDIO, transport: '${SECRET}' }] }, 'upstreams[0].transport'],
        ['a string where an object is expected', { upstreams: [{ ...HTTP, headers: '${SECRET}' }] }, 'upstreams[0].headers'],
        ['a string where an array is expected', { upstreams: [{ ...STDIO, args: 'x-${SECRET}' }] }, 'upstreams[0].args'],
        ['a too-long separator', { namespace: { separator: '${SECRET}' }, upstreams: [STDIO] }, 'namespace.separator']
    ];
    for (const [label, document, path] of cases) {
        test(label, () => {
            const error = rejects(json(document), env);
            lineFor(error, path);
            assert.ok(!error.message.includes(SECRET), `secret leaked:\n${error.message}`);
            assert.ok(!JSON.stringify(error.issues).includes(SECRET), 'secret leaked into the issues');
        });
    }
});
