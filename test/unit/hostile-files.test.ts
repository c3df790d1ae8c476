/**
 * Files the gateway reads by name (its config, client config files, env files, JWKS files, prompt files) are
 * regular files of bounded size and depth: a FIFO, a link to one, a device, a socket or a folder is refused by
 * kind without blocking, a file over its kind's limit is refused naming the limit, and JSON nested without end is
 * a config error, never a stack overflow. Real files on disk throughout.
 */
import assert from 'node:assert/strict';
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { loadGatewayConfig } from '../../src/config/load.js';
import { readRegularFile } from '../../src/config/read-text-file.js';
import { readPromptFile } from '../../src/upstream/files/file-read.js';
import { scanFolder } from '../../src/upstream/files/folder.js';
import { makeFifo } from '../fifo.js';
import { configFailure as failure, lineFor } from './config-assert.js';
import { folder as tempFolder, write } from './files-on-disk.js';

/** Each test is bounded: a read that blocks fails the test (and the FIFO's teardown lets the reader go). */
const BOUNDED = { timeout: 20_000 };
const MiB = 1_048_576;
const DEEP = 200_000;

const folder = (t: TestContext) => tempFolder(t, 'gateway-hostile-files-');

/** A file of `size` bytes that takes no room (sparse). */
async function sized(file: string, size: number): Promise<string> {
    await writeFile(file, '');
    await truncate(file, size);
    return file;
}

const escaped = (text: string) => text.replaceAll(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/** A unix socket file in `dir`, closed at teardown. */
async function socketFile(t: TestContext, file: string): Promise<string> {
    const server = createServer();
    await new Promise<void>(resolve => server.listen(file, resolve));
    t.after(() => new Promise<void>(resolve => server.close(() => resolve())));
    return file;
}

/** Where each kind of file is named: its loader, and the line of the error that must name it. */
function loaders(dir: string) {
    const jwt = (jwksFile: string) => ({ auth: { mode: 'jwt', jwksFile }, clients: [{ id: 'a' }], upstreams: [{ id: 'a', transport: 'stdio', command: 'node' }] });
    return {
        'config files': async (file: string) => lineFor(await failure(loadGatewayConfig({ file }, {})), '(top level)'),
        'client config files': async (file: string) =>
            lineFor(await failure(loadGatewayConfig({ file: await write(path.join(dir, 'listing.json'), { upstreamsFrom: [{ file }] }) }, {})), 'upstreamsFrom[0].file'),
        'env files': async (file: string) =>
            lineFor(
                await failure(loadGatewayConfig({ from: [await write(path.join(dir, 'mcp.json'), { mcpServers: { docs: { command: 'node', envFile: file } } })] }, {})),
                'mcpServers.docs.envFile'
            ),
        'JWKS files': async (file: string) => lineFor(await failure(loadGatewayConfig({ file: await write(path.join(dir, 'jwt.json'), jwt(file)) }, {})), 'auth.jwksFile')
    };
}

describe('files read by name are regular files', () => {
    test('a FIFO, a link to a FIFO, a device, a socket and a folder are refused by kind, naming the path, without blocking', BOUNDED, async t => {
        const dir = await folder(t);
        const fifo = makeFifo(t, path.join(dir, 'fifo'));
        const link = path.join(dir, 'link-to-fifo');
        await symlink(fifo, link);
        const socket = await socketFile(t, path.join(dir, 'socket'));
        const sub = path.join(dir, 'folder');
        await mkdir(sub);
        const cases: [string, RegExp][] = [
            [fifo, /is a FIFO, not a regular file/],
            [link, /is a FIFO, not a regular file/],
            ['/dev/zero', /is a device, not a regular file/],
            ['/dev/null', /is a device, not a regular file/],
            [socket, /is a socket, not a regular file/],
            [sub, /is a folder/]
        ];
        for (const [kind, load] of Object.entries(loaders(dir))) {
            for (const [file, what] of cases) {
                const line = await load(file);
                assert.match(line, what, `${kind} ${file}`);
                assert.match(line, new RegExp(escaped(`(${file})`)), `${kind} ${file}: the message names the path`);
            }
        }
    });

    test('each kind of file has a size limit, named when a file is over it', BOUNDED, async t => {
        const dir = await folder(t);
        const load = loaders(dir);
        const limits: [keyof typeof load, number][] = [
            ['config files', MiB],
            ['client config files', 16 * MiB],
            ['env files', MiB],
            ['JWKS files', MiB]
        ];
        for (const [kind, limit] of limits) {
            const file = await sized(path.join(dir, `${kind.replaceAll(' ', '-')}-too-large`), limit + 1);
            const line = await load[kind](file);
            assert.match(line, new RegExp(`larger than ${limit} bytes \\(the limit for ${kind}\\)`), line);
            assert.match(line, new RegExp(escaped(`(${file})`)));
        }
        // At the limit itself: read.
        await write(path.join(dir, 'at-limit.env'), `A=${'x'.repeat(MiB - 3)}\n`);
        const client = await write(path.join(dir, 'at-limit.json'), { mcpServers: { docs: { command: 'node', envFile: 'at-limit.env' } } });
        const [docs] = (await loadGatewayConfig({ from: [client] }, {})).config.upstreams;
        assert.equal(docs?.transport === 'stdio' ? docs.env.A?.length : undefined, MiB - 3);
    });
});

describe('the reader stops at the limit while reading, not only by the size the file claims', () => {
    test('a file whose stat says 0 bytes (as in /proc) is read to its end, and refused once past the limit', BOUNDED, async () => {
        const status = await readRegularFile('/proc/self/status', { kind: 'status files', maxBytes: MiB });
        assert.equal(status.info.size, 0);
        assert.match(status.bytes.toString('utf8'), /^Name:/);
        await assert.rejects(readRegularFile('/proc/self/status', { kind: 'status files', maxBytes: 10 }), {
            reason: 'too-large',
            message: 'larger than 10 bytes (the limit for status files)'
        });
    });
});

describe('JSON nested without end is a config error naming the file and the limit', () => {
    const nested = (open: string, close: string) => `${open.repeat(DEEP)}${close.repeat(DEEP)}`;

    test('a client config file, JSONC with a comment', BOUNDED, async t => {
        const dir = await folder(t);
        const client = await write(path.join(dir, '.vscode/mcp.json'), `// deep\n{ "servers": { "a": { "command": "node", "x": ${nested('[', ']')} } } }`);
        const error = await failure(loadGatewayConfig({ from: [client] }, {}));
        assert.match(error.message, new RegExp(escaped(client)));
        assert.match(error.message, /nested deeper than 64 levels/);
        assert.doesNotMatch(error.message, /call stack/);
    });

    test('the gateway config', BOUNDED, async t => {
        const dir = await folder(t);
        const file = await write(path.join(dir, 'gateway.json'), `{ "upstreams": ${nested('[', ']')} }`);
        const error = await failure(loadGatewayConfig({ file }, {}));
        assert.equal(error.source, file);
        assert.match(error.message, /nested deeper than 64 levels/);
        const objects = await write(path.join(dir, 'objects.json'), `{ "upstreams": [ ${'{"a":'.repeat(DEEP / 2)}1${'}'.repeat(DEEP / 2)} ] }`);
        assert.match((await failure(loadGatewayConfig({ file: objects }, {}))).message, /nested deeper than 64 levels at line 1, column \d+ \(the limit for config files\)/);
    });

    test('a JWKS file', BOUNDED, async t => {
        const dir = await folder(t);
        await write(path.join(dir, 'jwks.json'), `{ "keys": [{ "kty": "oct", "k": "AAAA", "x5c": ${nested('[', ']')} }] }`);
        const file = await write(path.join(dir, 'jwt.json'), {
            auth: { mode: 'jwt', jwksFile: 'jwks.json' },
            clients: [{ id: 'a' }],
            upstreams: [{ id: 'a', transport: 'stdio', command: 'node' }]
        });
        assert.match(lineFor(await failure(loadGatewayConfig({ file }, {})), 'auth.jwksFile'), /nested deeper than 64 levels/);
    });
});

describe('prompt files are regular files', () => {
    test('a FIFO named *.md in the folder, and a link to a FIFO inside it, are reported, not opened for blocking reads', BOUNDED, async t => {
        const dir = await folder(t);
        await write(path.join(dir, 'ok.md'), 'Fine.');
        makeFifo(t, path.join(dir, 'pipe.md'));
        makeFifo(t, path.join(dir, 'target'));
        await symlink(path.join(dir, 'target'), path.join(dir, 'p.md'));
        const scan = await scanFolder(dir, 100, 'markdown');
        assert.deepEqual(
            scan.problems.map(problem => [problem.source, problem.message]),
            [['pipe.md', 'is a FIFO, not a regular file; not read']]
        );
        const link = scan.files.get('p.md');
        assert.ok(link !== undefined, 'the link points inside the folder: it is read, and its target checked on the handle');
        const read = await readPromptFile(link, 'p.md', undefined, 'markdown');
        assert.equal(read.kind, 'read');
        assert.deepEqual(read.kind === 'read' ? read.outcome : undefined, { ok: false, error: { line: undefined, message: 'is a FIFO, not a regular file; not read' } });
        const fine = await readPromptFile(scan.files.get('ok.md')!, 'ok.md', undefined, 'markdown');
        assert.equal(fine.kind === 'read' && fine.outcome.ok, true);
    });

    test('a prompt file over 256 KiB is refused naming the limit, without being read', BOUNDED, async t => {
        const dir = await folder(t);
        await sized(path.join(dir, 'huge.md'), 64 * MiB);
        const read = await readPromptFile({ absolute: path.join(dir, 'huge.md'), link: false }, 'huge.md', undefined, 'markdown');
        assert.deepEqual(read.kind === 'read' ? read.outcome : undefined, {
            ok: false,
            error: { line: undefined, message: 'larger than 262144 bytes (the limit for prompt files); split the prompt' }
        });
    });
});
