/**
 * The revision table against the official schema of each revision (vendored in test/fixtures/spec-schemas): every
 * boolean column says what the schema says, so a new revision is a row plus what this test finds missing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { CODE } from '../../src/protocol/errors.js';
import { META } from '../../src/protocol/meta.js';
import { eraOfConfig, LATEST_HANDSHAKE, LATEST_STATELESS, negotiateHandshake, REVISIONS, revisionOf, SUPPORTED_VERSIONS, type Revision } from '../../src/protocol/revisions.js';
import { ROOT } from '../helpers.js';

type Obj = Record<string, unknown>;

class Schema {
    readonly definitions: Record<string, Obj>;

    constructor(version: string) {
        const schema = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/spec-schemas', `${version}.json`), 'utf8')) as Obj;
        this.definitions = (schema.definitions ?? schema.$defs) as Record<string, Obj>;
    }

    has(definition: string): boolean {
        return Object.hasOwn(this.definitions, definition);
    }

    /** The properties of a definition, following a `$ref` one level (a notification's params). */
    properties(definition: string, property?: string): Obj {
        let node = this.definitions[definition];
        if (node === undefined) return {};
        if (property !== undefined) node = (node.properties as Obj | undefined)?.[property] as Obj | undefined;
        const ref = node?.$ref;
        if (typeof ref === 'string') node = this.definitions[ref.split('/').at(-1)!];
        return (node?.properties as Obj | undefined) ?? {};
    }

    hasProperty(definition: string, property: string): boolean {
        return Object.hasOwn(this.properties(definition), property);
    }

    /** The `code` an error definition fixes, wherever it sits (on the error itself, or on its response's `error`). */
    errorCode(definition: string): unknown {
        const find = (node: unknown): unknown => {
            if (typeof node !== 'object' || node === null) return undefined;
            const code = ((node as Obj).properties as Obj | undefined)?.code as Obj | undefined;
            if (code?.const !== undefined) return code.const;
            for (const child of Object.values(node)) {
                const found = find(child);
                if (found !== undefined) return found;
            }
            return undefined;
        };
        return find(this.definitions[definition]);
    }

    methods(): Set<unknown> {
        return new Set(Object.values(this.definitions).map(definition => ((definition.properties as Obj | undefined)?.method as Obj | undefined)?.const));
    }
}

/** What the gateway's results may carry: a revision that has all of it gets them unchanged (`current`). */
const CONTENT_COLUMNS = ['titles', 'icons', 'meta', 'lastModified', 'audio', 'resourceLinks', 'progressMessage'];

/** Each boolean column as its revision's schema tells it. */
const FROM_SCHEMA: Record<string, (schema: Schema) => boolean> = {
    batches: schema => schema.has('JSONRPCBatchRequest'),
    titles: schema => schema.hasProperty('Prompt', 'title') && schema.hasProperty('PromptArgument', 'title'),
    icons: schema => schema.hasProperty('Prompt', 'icons'),
    meta: schema => ['Prompt', 'TextContent', 'EmbeddedResource', 'TextResourceContents'].every(definition => schema.hasProperty(definition, '_meta')),
    lastModified: schema => schema.hasProperty('Annotations', 'lastModified'),
    audio: schema => schema.has('AudioContent'),
    resourceLinks: schema => schema.has('ResourceLink'),
    progressMessage: schema => Object.hasOwn(schema.properties('ProgressNotification', 'params'), 'message'),
    completionsCapability: schema => schema.hasProperty('ServerCapabilities', 'completions'),
    handshake: schema => schema.methods().has('initialize') && schema.methods().has('ping') && schema.has('InitializeResult'),
    discover: schema => schema.methods().has('server/discover') && schema.has('DiscoverResult'),
    resultType: schema => schema.hasProperty('Result', 'resultType') && schema.hasProperty('GetPromptResult', 'resultType'),
    serverInfoMeta: schema => schema.hasProperty('ResultMetaObject', META.serverInfo),
    cachingHints: schema => ['ListPromptsResult', 'DiscoverResult'].every(result => schema.hasProperty(result, 'ttlMs') && schema.hasProperty(result, 'cacheScope')),
    subscriptionsListen: schema => schema.methods().has('subscriptions/listen') && schema.has('SubscriptionsListenResult'),
    inputRequired: schema =>
        schema.has('InputRequiredResult') && ['inputResponses', 'requestState'].every(field => Object.hasOwn(schema.properties('GetPromptRequest', 'params'), field)),
    mirroredHeaders: schema => schema.has('HeaderMismatchError'),
    serverRequests: schema => schema.has('ServerRequest'),
    elicitation: schema => schema.has('ElicitRequest') && schema.has('ElicitResult'),
    urlElicitation: schema => schema.has('ElicitRequestURLParams') && schema.hasProperty('ElicitRequestURLParams', 'url'),
    elicitationMultiSelect: schema => schema.has('UntitledMultiSelectEnumSchema') && schema.has('TitledSingleSelectEnumSchema'),
    urlElicitationId: schema => schema.hasProperty('ElicitRequestURLParams', 'elicitationId'),
    samplingTools: schema =>
        ['tools', 'toolChoice'].every(field => Object.hasOwn(schema.properties('CreateMessageRequest', 'params'), field)) &&
        schema.has('ToolUseContent') &&
        schema.has('ToolResultContent'),
    samplingAudio: schema => JSON.stringify(schema.properties('SamplingMessage').content ?? {}).includes('AudioContent'),
    samplingContextCapability: schema => Object.hasOwn(schema.properties('ClientCapabilities', 'sampling'), 'context'),
    current: schema => CONTENT_COLUMNS.every(column => FROM_SCHEMA[column]!(schema))
};

const BOOLEAN_COLUMNS = Object.keys(REVISIONS[0]!).filter(column => typeof REVISIONS[0]![column as keyof Revision] === 'boolean');

describe('the revision table', () => {
    for (const revision of REVISIONS) {
        test(`${revision.version}: every boolean column matches the official schema`, () => {
            const schema = new Schema(revision.version);
            for (const column of BOOLEAN_COLUMNS) {
                const read = FROM_SCHEMA[column];
                assert.ok(read, `column ${column} has no check against the schema: add one to FROM_SCHEMA`);
                assert.equal(revision[column as keyof Revision], read(schema), `${revision.version}.${column}`);
            }
            // The era is its lifecycle: a handshake, or every request on its own, told what the server is by discover.
            assert.equal(revision.era, revision.handshake ? 'handshake' : 'stateless');
            assert.equal(revision.discover, !revision.handshake);
        });
    }

    test("the 2026-07-28 error codes are the schema's", () => {
        const schema = new Schema(LATEST_STATELESS.version);
        const code = (definition: string) => schema.errorCode(definition);
        assert.equal(code('HeaderMismatchError'), CODE.headerMismatch);
        assert.equal(code('MissingRequiredClientCapabilityError'), CODE.missingClientCapability);
        assert.equal(code('UnsupportedProtocolVersionError'), CODE.unsupportedVersion);
        assert.equal(code('ParseError'), CODE.parseError);
        assert.equal(code('InvalidRequestError'), CODE.invalidRequest);
        assert.equal(code('MethodNotFoundError'), CODE.methodNotFound);
        assert.equal(code('InvalidParamsError'), CODE.invalidParams);
        assert.equal(code('InternalError'), CODE.internalError);
    });

    test('rows are frozen singletons, newest first, looked up by version', () => {
        for (const revision of REVISIONS) {
            assert.ok(Object.isFrozen(revision));
            assert.equal(revisionOf(revision.version), revision);
        }
        assert.deepEqual(
            REVISIONS.map(revision => revision.version),
            REVISIONS.map(revision => revision.version)
                .sort()
                .reverse()
        );
        assert.equal(revisionOf('2024-10-07'), undefined);
        assert.equal(revisionOf(''), undefined);
    });

    test('the newest of each era, the versions served (stateless first) and the handshake negotiation', () => {
        assert.equal(LATEST_HANDSHAKE.version, '2025-11-25');
        assert.equal(LATEST_STATELESS.version, '2026-07-28');
        assert.deepEqual(SUPPORTED_VERSIONS, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
        assert.equal(negotiateHandshake('2025-03-26'), revisionOf('2025-03-26'));
        for (const requested of ['2026-07-28', '2099-01-01', '2024-10-07', '']) assert.equal(negotiateHandshake(requested), LATEST_HANDSHAKE);
    });

    test("an upstream's configured protocol: its era, or none to probe", () => {
        assert.equal(eraOfConfig('auto'), undefined);
        assert.equal(eraOfConfig('2025'), 'handshake');
        assert.equal(eraOfConfig('2026-07-28'), 'stateless');
    });
});
