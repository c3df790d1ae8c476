/**
 * Config that still names a prompt file by its path (`team__ops/incident`), from before prompt files were named
 * after their file: each allow/deny pattern and override key that can no longer match is one warning naming the
 * field, the old name and the new one where it follows; patterns that may be about another upstream are left alone.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { staleNameNotes } from '../../src/upstream/files/stale-names.js';

const notesOf = (config: Record<string, unknown>) => staleNameNotes(parseConfig(JSON.stringify(config), 'test config', {})).map(note => note.message);

const TEAM = { id: 'team', transport: 'files', path: 'prompts' };
const SERVER = { id: 'docs', transport: 'stdio', command: 'docs-server' };

describe('config naming prompt files by their path', () => {
    test('an allow-list, a deny-list and an override naming a file by its path: one warning each, with the new name', () => {
        const notes = notesOf({
            upstreams: [{ ...TEAM, prompts: { deny: ['ops/secret'] }, overrides: { 'ops/incident': { title: 'Incident' }, review: { title: 'Review' } } }, SERVER],
            anonymous: { prompts: { allow: ['team__ops/incident', 'team__review', 'docs__a/b'] } }
        });
        assert.deepEqual(notes, [
            'upstreams[0].prompts.deny[0]: "ops/secret" names a prompt of files upstream "team" with its folder, but prompt files are named after their file now, without their folders (docs/prompt-files.md, Names): what it hid is shown now; use "secret"',
            'upstreams[0].overrides["ops/incident"]: "ops/incident" names a prompt of files upstream "team" with its folder, but prompt files are named after their file now, without their folders (docs/prompt-files.md, Names): it applies to nothing now; use "incident"',
            'anonymous.prompts.allow[0]: "team__ops/incident" names a prompt of files upstream "team" with its folder, but prompt files are named after their file now, without their folders (docs/prompt-files.md, Names): it matches nothing now; use "team__incident"'
        ]);
    });

    test('a glob gets no new name; every policy and the separator are looked at; the format says the new name', () => {
        const notes = notesOf({
            namespace: { separator: '--' },
            upstreams: [{ ...TEAM, format: 'gemini-commands' }],
            prompts: { deny: ['team--ops/*'] },
            auth: { mode: 'apiKey' },
            clients: [{ id: 'ci', apiKeySha256: 'a'.repeat(64), prompts: { allow: ['team--git/commit'] } }]
        });
        assert.equal(notes.length, 2);
        assert.match(notes[0]!, /^prompts\.deny\[0\]: "team--ops\/\*" .*: what it hid is shown now; name the prompts without their folders$/);
        assert.match(notes[1]!, /^clients\[0\]\.prompts\.allow\[0\]: "team--git\/commit" .*; use "team--git\.commit"$/);
    });

    test('without a namespace, a name with "/" is warned of only when no other server could list it', () => {
        const bare = { ...TEAM, namespace: false };
        const notes = notesOf({ upstreams: [bare], prompts: { allow: ['ops/incident', 'ops/*'] } });
        assert.equal(notes.length, 1, 'a glob without a prefix may be about any upstream');
        assert.match(notes[0]!, /^prompts\.allow\[0\]: "ops\/incident" .*; use "incident"$/);
        assert.deepEqual(notesOf({ upstreams: [bare, { ...SERVER, namespace: false }], prompts: { allow: ['ops/incident'] } }), []);
    });

    test('nothing to say without files upstreams, or with names that have no "/"', () => {
        assert.deepEqual(notesOf({ upstreams: [SERVER], prompts: { allow: ['docs__a/b'] } }), []);
        assert.deepEqual(notesOf({ upstreams: [{ ...TEAM, prompts: { allow: ['incident', 'ops.*'] } }], prompts: { deny: ['team__*'] } }), []);
    });
});
