import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Prompt } from '@modelcontextprotocol/client';
import type { CatalogView } from '../../src/catalog/catalog.js';
import type { UpstreamList } from '../../src/catalog/list-cache.js';
import { nameTable } from '../../src/catalog/names.js';
import { capturingLogger } from '../helpers.js';
import { FakeUpstream, prompt, silentLogger } from './fake-upstream.js';

const UNDERSCORES = { separator: '__' };

function list(...names: string[]): UpstreamList {
    const prompts: Prompt[] = names.map(name => prompt(name));
    return { prompts, digests: names.map(name => `digest-${name}`), names, version: `v-${names.join(',')}` };
}

/** Per segment, its upstream and the exposed name of each entry ('-' where it is left out). */
function layout(view: CatalogView): string[] {
    return view.segments.map(segment => `${segment.upstreamId}: ${segment.entries.map(entry => entry?.exposedName ?? '-').join(' ')}`);
}

const namespaced = (id: string) => new FakeUpstream(id, [], { namespace: true });
const flat = (id: string) => new FakeUpstream(id, [], { namespace: false });

describe('name table', () => {
    test('a namespaced upstream exposes <id><separator><name>; each entry keeps its upstream, original name and digest', () => {
        const docs = namespaced('docs');
        const view = nameTable([docs], [list('review', 'draft')], UNDERSCORES, silentLogger);
        assert.deepEqual(layout(view), ['docs: docs__review docs__draft']);
        const entry = view.byName.get('docs__review');
        assert.equal(entry?.upstream, docs);
        assert.equal(entry?.originalName, 'review');
        assert.equal(entry?.prompt.name, 'docs__review', 'clients see the exposed name');
        assert.equal(entry?.digest, 'digest-review');
        assert.equal(view.byName.get('review'), undefined);
    });

    test('the separator is the configured one, and names holding it resolve by lookup, not by splitting', () => {
        const a = namespaced('a');
        const ab = namespaced('a.b');
        const view = nameTable([a, ab], [list('b.c'), list('c')], { separator: '.' }, silentLogger);
        assert.deepEqual(layout(view), ['a: a.b.c', 'a.b: -'], 'one exposed name, two candidates: the first upstream in config order keeps it');
        assert.equal(view.byName.get('a.b.c')?.originalName, 'b.c');
        assert.equal(view.byName.get('a.b.c')?.upstream, a);
        const underscored = nameTable([namespaced('x')], [list('a__b__c')], UNDERSCORES, silentLogger);
        assert.equal(underscored.byName.get('x__a__b__c')?.originalName, 'a__b__c');
    });

    test('a name clash goes to the first upstream in config order, and is logged', () => {
        const first = flat('first');
        const second = flat('second');
        const { logger, lines } = capturingLogger();
        const view = nameTable([first, second], [list('shared', 'own1'), list('own2', 'shared')], UNDERSCORES, logger);
        assert.deepEqual(layout(view), ['first: shared own1', 'second: own2 -']);
        assert.equal(view.byName.get('shared')?.upstream, first);
        const clash = lines().find(line => line.msg === 'prompt name clash; keeping the first upstream in config order');
        assert.deepEqual({ kept: clash?.kept, dropped: clash?.dropped }, { kept: 'first', dropped: 'second' });

        const swapped = nameTable([second, first], [list('own2', 'shared'), list('shared', 'own1')], UNDERSCORES, silentLogger);
        assert.equal(swapped.byName.get('shared')?.upstream, second);
    });

    test("an unprefixed name in a namespaced upstream's namespace is left out, wherever that upstream stands", () => {
        const loose = flat('loose');
        const docs = namespaced('docs');
        const view = nameTable([loose, docs], [list('docs__x', 'docs__x__y', 'other__y', '__z', 'docs'), list('a')], UNDERSCORES, silentLogger);
        assert.deepEqual(layout(view), ['loose: - - other__y __z docs', 'docs: docs__a']);
    });

    test('segments follow config order; an upstream without a list is an empty segment', () => {
        const view = nameTable([namespaced('b'), namespaced('a'), namespaced('c')], [list('1'), undefined, list('2')], UNDERSCORES, silentLogger);
        assert.deepEqual(layout(view), ['b: b__1', 'a: ', 'c: c__2']);
        assert.deepEqual(
            view.segments.map(segment => segment.version),
            ['v-1', 'empty', 'v-2']
        );
        assert.deepEqual(view.segments[0]?.names, ['1'], "a segment names the upstream's own list, which cursors walk");
    });
});
