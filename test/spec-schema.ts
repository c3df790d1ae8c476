/**
 * The official JSON Schema of each protocol revision (vendored in test/fixtures/spec-schemas), and the check of
 * one message against the revision it was sent under: the envelope, and the payload for its method.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ROOT } from './helpers.js';
import type { JsonRpcMessage as Message } from './raw-http.js';

/** The handshake-era revisions, negotiated with `initialize`. */
export const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;
/** The stateless revision: every request names it in `_meta`. */
export const MODERN_REVISION = '2026-07-28';
export type Revision = (typeof REVISIONS)[number] | typeof MODERN_REVISION;

type Obj = Record<string, unknown>;

// ajv-formats is CommonJS with `exports.default`; under Node's ESM interop the default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** The definition a result of each method must match (where the revision has the method). */
const RESULT_DEFINITION: Record<string, string> = {
    initialize: 'InitializeResult',
    ping: 'EmptyResult',
    'server/discover': 'DiscoverResult',
    'subscriptions/listen': 'SubscriptionsListenResult',
    'prompts/list': 'ListPromptsResult',
    'prompts/get': 'GetPromptResult',
    'completion/complete': 'CompleteResult',
    'tools/list': 'ListToolsResult',
    'resources/list': 'ListResourcesResult',
    'resources/templates/list': 'ListResourceTemplatesResult'
};
const NOTIFICATION_DEFINITION: Record<string, string> = {
    'notifications/prompts/list_changed': 'PromptListChangedNotification',
    'notifications/subscriptions/acknowledged': 'SubscriptionsAcknowledgedNotification',
    'notifications/message': 'LoggingMessageNotification',
    'notifications/progress': 'ProgressNotification',
    'notifications/cancelled': 'CancelledNotification'
};

export class SpecSchema {
    readonly #ajv: Ajv;
    readonly #definitions: Obj;
    readonly #pointer: string;
    readonly #compiled = new Map<string, ValidateFunction>();

    constructor(readonly revision: Revision) {
        const schema = JSON.parse(readFileSync(path.join(ROOT, `test/fixtures/spec-schemas/${revision}.json`), 'utf8')) as Obj;
        const dialect = schema['$schema'];
        if (dialect === 'http://json-schema.org/draft-07/schema#') this.#ajv = new Ajv({ allErrors: true, strict: false });
        else if (dialect === 'https://json-schema.org/draft/2020-12/schema') this.#ajv = new Ajv2020({ allErrors: true, strict: false });
        else throw new Error(`${revision}: unexpected $schema ${String(dialect)}`);
        addFormats(this.#ajv);
        const key = 'definitions' in schema ? 'definitions' : '$defs';
        this.#definitions = schema[key] as Obj;
        this.#pointer = `mcp-${revision}#/${key}/`;
        this.#ajv.addSchema(schema, `mcp-${revision}`);
    }

    has(definition: string): boolean {
        return definition in this.#definitions;
    }

    /** The first of `names` this revision defines (e.g. JSONRPCError became JSONRPCErrorResponse in 2025-11-25). */
    pick(...names: string[]): string {
        const found = names.find(name => this.has(name));
        if (found === undefined) throw new Error(`${this.revision} defines none of ${names.join(', ')}`);
        return found;
    }

    /** Validation errors of `value` against one definition, as readable lines (empty when valid). */
    check(definition: string, value: unknown): string[] {
        let validate = this.#compiled.get(definition);
        if (!validate) {
            if (!this.has(definition)) return [`${this.revision} has no definition ${definition}`];
            validate = this.#ajv.compile({ $ref: `${this.#pointer}${definition}` });
            this.#compiled.set(definition, validate);
        }
        if (validate(value)) return [];
        return (validate.errors ?? []).map(error => `${definition}${error.instancePath}: ${error.message ?? '?'} ${JSON.stringify(error.params)}`);
    }

    /**
     * Every problem with one received message: the envelope, and the payload for the method it answers
     * (responses), or its own method (notifications, requests).
     */
    problems(message: Message, requestMethod: string | undefined): string[] {
        const problems = this.check('JSONRPCMessage', message);
        if ('error' in message) {
            problems.push(...this.check(this.pick('JSONRPCErrorResponse', 'JSONRPCError'), message));
        } else if ('result' in message) {
            problems.push(...this.check(this.pick('JSONRPCResultResponse', 'JSONRPCResponse'), message));
            const definition = requestMethod === undefined ? undefined : resultDefinition(requestMethod, message.result);
            if (definition === undefined) problems.push(`a response to ${String(requestMethod)}, which was never sent`);
            else problems.push(...this.check(definition, message.result));
        } else if ('id' in message) {
            problems.push(...this.check('JSONRPCRequest', message), ...this.check('ServerRequest', message));
        } else {
            problems.push(...this.check('JSONRPCNotification', message), ...this.check('ServerNotification', message));
            const definition = NOTIFICATION_DEFINITION[message.method ?? ''];
            if (definition !== undefined) problems.push(...this.check(definition, message));
        }
        return problems;
    }
}

/** From 2026-07-28 a result may ask for input instead (multi round-trip requests); it says so in `resultType`. */
function resultDefinition(requestMethod: string, result: unknown): string | undefined {
    const inputRequired = typeof result === 'object' && result !== null && (result as Obj).resultType === 'input_required';
    return inputRequired ? 'InputRequiredResult' : RESULT_DEFINITION[requestMethod];
}
