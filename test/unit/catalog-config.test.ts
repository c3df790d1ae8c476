/** catalog.*: defaults, the server name, and the paths the page and its files take on the MCP listener. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConfigError } from '../../src/config/issues.js';
import { parseConfig } from '../../src/config/load.js';
import { configError, lineFor } from './config-assert.js';

const SOURCE = 'gateway.test.json';
const STDIO = { id: 'local', transport: 'stdio', command: 'node' };

const parse = (config: Record<string, unknown>) => parseConfig(JSON.stringify({ upstreams: [STDIO], ...config }), SOURCE, {});
const rejects = (config: Record<string, unknown>): ConfigError => configError(() => parse(config));

/** The config's issue lines about the catalog. */
const catalogLines = (error: ConfigError) => error.message.split('\n').filter(line => line.startsWith('  - catalog.'));

describe('catalog config', () => {
    test('on by default at /catalog, for a server named "prompts"', () => {
        assert.deepEqual(parse({}).catalog, { enabled: true, path: '/catalog', serverName: 'prompts' });
    });

    test('a server name that would not fit a client command is refused, naming the field and what fits', () => {
        for (const serverName of ['', 'my server', 'a.b', 'x'.repeat(65), 'päge']) {
            const error = rejects({ catalog: { serverName } });
            assert.match(lineFor(error, 'catalog.serverName'), /must be 1 to 64 letters, digits, "_" or "-"/, serverName);
        }
        assert.equal(parse({ catalog: { serverName: 'team-prompts_2' } }).catalog.serverName, 'team-prompts_2');
    });

    test('a path the MCP listener already serves is one issue naming catalog.path, its owner and the fix', () => {
        const cases: [Record<string, unknown>, RegExp][] = [
            [{ catalog: { path: '/mcp' } }, /"\/mcp" is already used by listen\.path; pick another path/],
            [{ listen: { path: '/prompts' }, catalog: { path: '/Prompts/' } }, /"\/Prompts\/" is already used by listen\.path/],
            [{ catalog: { path: '/healthz' } }, /already used by the health checks/],
            [{ catalog: { path: '/readyz/' } }, /already used by the health checks/],
            [{ catalog: { path: '/dashboard' } }, /"\/dashboard" is already used by dashboard\.path/],
            [{ catalog: { path: '/metrics' } }, /"\/metrics" is already used by metrics\.path/],
            // Everything below it is its own (its files, whatever the folder holds): the dashboard or the endpoint there too.
            [{ dashboard: { path: '/catalog/render.js' } }, /the catalog serves its files below "\/catalog", where dashboard\.path is; pick another path/],
            [{ dashboard: { path: '/catalog/any-new-file.js' } }, /below "\/catalog", where dashboard\.path is/],
            [{ listen: { path: '/Catalog/mcp' }, catalog: { path: '/catalog/' } }, /below "\/catalog\/", where listen\.path is/]
        ];
        for (const [config, message] of cases) {
            const error = rejects(config);
            assert.match(lineFor(error, 'catalog.path'), message, JSON.stringify(config));
            assert.equal(catalogLines(error).length, 1, error.message);
        }
    });

    test('a path starting with "//" is refused for the endpoint and the catalog: a page joining it to its origin would name another host', () => {
        assert.match(lineFor(rejects({ listen: { path: '//evil.example/mcp' } }), 'listen.path'), /must be a URL path starting with one "\/" \(not "\/\/"\)/);
        assert.match(lineFor(rejects({ catalog: { path: '//evil.example/catalog' } }), 'catalog.path'), /starting with one "\/"/);
        assert.equal(parse({ listen: { path: '/a//b' } }).listen.path, '/a//b', 'two slashes inside stay a path');
    });

    test('the MCP path and the health checks in another case or with a trailing slash are taken too', () => {
        assert.match(lineFor(rejects({ metrics: { path: '/MCP/' } }), 'metrics.path'), /already used by listen\.path/);
        assert.match(lineFor(rejects({ listen: { path: '/healthz' } }), 'listen.path'), /already used by the health checks/);
    });

    test('with metrics.listen the operator routes have a listener of their own: the catalog may take their paths', () => {
        const config = parse({ metrics: { listen: { port: 0 } }, catalog: { path: '/dashboard' } });
        assert.equal(config.catalog.path, '/dashboard');
        parse({ metrics: { listen: { port: 0 } }, catalog: { path: '/metrics' } });
        // Not the health checks: the MCP listener serves them either way.
        assert.match(lineFor(rejects({ metrics: { listen: { port: 0 } }, catalog: { path: '/healthz' } }), 'catalog.path'), /health checks/);
    });

    test('turned off, the catalog claims nothing; the operator routes turned off free their paths', () => {
        parse({ catalog: { enabled: false, path: '/mcp' } });
        parse({ dashboard: { enabled: false }, catalog: { path: '/dashboard' } });
        parse({ metrics: { enabled: false }, catalog: { path: '/metrics' } });
    });
});
