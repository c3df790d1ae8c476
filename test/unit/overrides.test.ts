import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Prompt } from '@modelcontextprotocol/client';
import { applyOverride, compileOverrides, curateList, withDefaults, type PromptOverride } from '../../src/catalog/overrides.js';
import { nameTable } from '../../src/catalog/names.js';
import { CuratedLists } from '../../src/catalog/curated-lists.js';
import type { UpstreamList } from '../../src/catalog/list-cache.js';
import { parseConfig } from '../../src/config/load.js';
import { capturingLogger } from '../helpers.js';
import { configError, lineFor } from './config-assert.js';
import { FakeUpstream, silentLogger } from './fake-upstream.js';

const review: Prompt = {
    name: 'review',
    title: 'Review',
    description: 'Reviews code',
    arguments: [
        { name: 'code', description: 'The code', required: true },
        { name: 'language', required: true }
    ]
};

function list(...prompts: Prompt[]): UpstreamList {
    const names = prompts.map(prompt => prompt.name);
    return { prompts, digests: names.map(name => `digest-${name}`), names, version: `v-${names.join(',')}` };
}

describe('applyOverride', () => {
    test('replaces title, description and argument descriptions; a default makes its argument optional', () => {
        const override: PromptOverride = {
            title: 'Code review',
            description: 'Reviews a diff against our style guide',
            arguments: { code: { description: 'The diff' }, language: { default: 'typescript' } }
        };
        const { prompt, defaults, unknownArguments } = applyOverride(review, override);
        assert.deepEqual(prompt, {
            name: 'review',
            title: 'Code review',
            description: 'Reviews a diff against our style guide',
            arguments: [
                { name: 'code', description: 'The diff', required: true },
                { name: 'language', required: false }
            ]
        });
        assert.deepEqual([...(defaults ?? [])], [['language', 'typescript']]);
        assert.deepEqual(unknownArguments, []);
        assert.equal(review.title, 'Review', "the upstream's definition is not changed");
    });

    test('leaves what it does not name as the upstream said; names arguments the prompt does not declare', () => {
        const { prompt, defaults, unknownArguments } = applyOverride(review, { arguments: { tone: { default: 'kind' }, constructor: { description: 'x' } } });
        assert.deepEqual(prompt, review);
        assert.equal(defaults, undefined, 'a default for an undeclared argument is not filled in');
        assert.deepEqual(unknownArguments, ['tone', 'constructor']);
    });

    test('renames', () => {
        assert.equal(applyOverride(review, { name: 'code-review' }).prompt.name, 'code-review');
    });
});

describe('curateList', () => {
    const plain: Prompt = { name: 'plain' };

    test('without overrides every prompt is as listed, with its own digest', () => {
        const curated = curateList([review, plain], ['d1', 'd2'], compileOverrides({}));
        assert.deepEqual(
            curated.prompts.map(entry => [entry?.localName, entry?.originalName, entry?.digest]),
            [
                ['review', 'review', 'd1'],
                ['plain', 'plain', 'd2']
            ]
        );
        assert.deepEqual(curated.report, { unmatched: [], unknownArguments: [], clashes: [] });
    });

    test('an override changes the digest, and another override another digest; a prompt without one keeps its own', () => {
        const one = curateList([review, plain], ['d1', 'd2'], compileOverrides({ review: { title: 'A' } }));
        const other = curateList([review, plain], ['d1', 'd2'], compileOverrides({ review: { title: 'B' } }));
        assert.notEqual(one.prompts[0]!.digest, 'd1');
        assert.notEqual(one.prompts[0]!.digest, other.prompts[0]!.digest);
        assert.equal(one.prompts[1]!.digest, 'd2');
    });

    test('reports override names that match no prompt, and arguments the prompt does not declare', () => {
        const curated = curateList([review], ['d1'], compileOverrides({ review: { arguments: { tone: {} } }, gone: { title: 'x' }, __proto__x: {} }));
        assert.deepEqual(curated.report, { unmatched: ['gone', '__proto__x'], unknownArguments: ['review.tone'], clashes: [] });
    });

    test('a rename keeps the original name for the upstream; a swap of two names is no clash', () => {
        const curated = curateList([review, plain], ['d1', 'd2'], compileOverrides({ review: { name: 'plain' }, plain: { name: 'review' } }));
        assert.deepEqual(
            curated.prompts.map(entry => `${entry?.localName}<-${entry?.originalName}`),
            ['plain<-review', 'review<-plain']
        );
        assert.deepEqual(curated.report.clashes, []);
    });

    test('a rename to a name the upstream lists for another prompt leaves the renamed one out, and says so', () => {
        const curated = curateList([review, plain], ['d1', 'd2'], compileOverrides({ review: { name: 'plain' } }));
        assert.equal(curated.prompts[0], undefined);
        assert.equal(curated.prompts[1]?.originalName, 'plain');
        assert.deepEqual(curated.report.clashes, [{ prompt: 'review', name: 'plain' }]);
    });
});

describe('withDefaults', () => {
    const defaults = new Map([['language', 'typescript']]);

    test('fills arguments the client left out, keeps what it sent (an empty string too)', () => {
        assert.deepEqual(withDefaults(undefined, defaults), { language: 'typescript' });
        assert.deepEqual(withDefaults(null, defaults), { language: 'typescript' });
        assert.deepEqual(withDefaults({ code: 'x' }, defaults), { code: 'x', language: 'typescript' });
        assert.deepEqual(withDefaults({ language: '' }, defaults), { language: '' });
    });

    test('passes what is not an object unchanged, for validation to reject; "__proto__" stays a key', () => {
        assert.equal(withDefaults('text', defaults), 'text');
        const args: unknown = JSON.parse('{"__proto__": "x"}');
        const filled = withDefaults(
            args,
            new Map([
                ['__proto__', 'y'],
                ['constructor', 'z']
            ])
        ) as Record<string, string>;
        assert.deepEqual(Object.entries(filled), [
            ['__proto__', 'x'],
            ['constructor', 'z']
        ]);
        assert.equal(Object.getPrototypeOf(filled), Object.prototype);
    });

    test('without defaults the arguments are the very same object', () => {
        const args = { code: 'x' };
        assert.equal(withDefaults(args, undefined), args);
    });
});

describe('overrides in the name table', () => {
    test('a renamed prompt is exposed as <id>__<new name>, keeps its original name and its place in the walk', () => {
        const docs = new FakeUpstream('docs', [], { namespace: true });
        const curated = new CuratedLists(silentLogger);
        curated.set(new Map([['docs', compileOverrides({ review: { name: 'code-review', arguments: { language: { default: 'ts' } } } })]]));
        const view = nameTable([docs], [list(review, { name: 'plain' })], { separator: '__' }, silentLogger, curated.curate);
        const entry = view.byName.get('docs__code-review');
        assert.equal(entry?.originalName, 'review');
        assert.equal(entry?.prompt.name, 'docs__code-review');
        assert.deepEqual([...(entry?.defaults ?? [])], [['language', 'ts']]);
        assert.equal(view.byName.get('docs__review'), undefined);
        assert.deepEqual(view.segments[0]!.names, ['review', 'plain'], "cursors walk the upstream's own names");
    });

    test('what does not apply is logged once per change, not on every curation', () => {
        const { logger, lines } = capturingLogger();
        const docs = new FakeUpstream('docs', [], { namespace: true });
        const curated = new CuratedLists(logger);
        const warnings = () => lines().filter(line => line.upstream === 'docs' && Array.isArray(line.unmatched));
        curated.set(new Map([['docs', compileOverrides({ gone: { title: 'x' } })]]));
        curated.curate(docs, list(review));
        curated.curate(docs, list(review));
        assert.equal(warnings().length, 1);
        assert.deepEqual(warnings()[0]!.unmatched, ['gone']);
        assert.deepEqual(curated.report('docs')?.unmatched, ['gone']);
        curated.curate(docs, list(review, { name: 'gone' }));
        assert.equal(curated.report('docs'), undefined, 'the upstream now lists it');
        curated.curate(docs, list(review));
        assert.equal(warnings().length, 2, 'it stopped matching again: reported again');
        curated.keep(new Set());
        assert.equal(curated.report('docs'), undefined, 'an upstream no longer configured has no report');
    });
});

describe('overrides config', () => {
    const parse = (upstream: Record<string, unknown>, rest: Record<string, unknown> = {}) =>
        parseConfig(JSON.stringify({ upstreams: [{ id: 'docs', transport: 'stdio', command: 'x', ...upstream }], ...rest }), 'test', {});

    test('is accepted on every transport and defaults to none', () => {
        assert.deepEqual(parse({}).upstreams[0]!.overrides, {});
        const config = parseConfig(
            JSON.stringify({ upstreams: [{ id: 'web', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', overrides: { a: { title: 'A' } } }] }),
            'test',
            {}
        );
        assert.deepEqual(config.upstreams[0]!.overrides, { a: { title: 'A' } });
    });

    test('a rename to an invalid prompt name names the field and what a valid name is', () => {
        const line = lineFor(
            configError(() => parse({ overrides: { review: { name: 'code review' } } })),
            'upstreams[0].overrides.review.name'
        );
        assert.match(line, /valid prompt name/);
    });

    test("two prompts renamed to one name, or renamed onto another override's name, is refused", () => {
        const both = configError(() => parse({ overrides: { a: { name: 'x' }, b: { name: 'x' } } }));
        assert.match(lineFor(both, 'upstreams[0].overrides.b.name'), /would both be named "x" \(also "a"\)/);
        const onto = configError(() => parse({ overrides: { a: { name: 'b' }, b: { title: 'B' } } }));
        assert.match(lineFor(onto, 'upstreams[0].overrides.b'), /would both be named "b"/);
    });

    test("a rename of an unprefixed upstream into a namespaced upstream's namespace is refused", () => {
        const error = configError(() =>
            parseConfig(
                JSON.stringify({
                    upstreams: [
                        { id: 'docs', transport: 'stdio', command: 'x' },
                        { id: 'flat', transport: 'stdio', command: 'x', namespace: false, overrides: { a: { name: 'docs__a' } } }
                    ]
                }),
                'test',
                {}
            )
        );
        assert.match(lineFor(error, 'upstreams[1].overrides.a.name'), /namespace of upstream "docs"/);
    });

    test('a default larger than limits.maxArgumentBytes is refused; unknown fields and long texts too', () => {
        const big = configError(() => parse({ overrides: { a: { arguments: { x: { default: 'y'.repeat(20) } } } } }, { limits: { maxArgumentBytes: 10 } }));
        assert.match(lineFor(big, 'upstreams[0].overrides.a.arguments.x.default'), /limits\.maxArgumentBytes \(10 bytes\)/);
        configError(() => parse({ overrides: { a: { titel: 'x' } } }));
        configError(() => parse({ overrides: { a: { description: 'x'.repeat(20_000) } } }));
    });
});
