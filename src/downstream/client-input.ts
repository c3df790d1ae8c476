/**
 * How the client a request serves answers what an upstream asks on the prompt's way, as the catalog's interaction
 * engine takes it (PLAN-28 section 3, `ClientInput` of src/catalog/interaction.ts): built per prompts/get by the
 * dispatcher, from the 2025 session (asked on the request's stream) or from the 2026-07-28 request (its `_meta`; it
 * answers by retrying).
 *
 * Declared here to the letter of that contract while the catalog's side is built beside it (issue 28 part C); once
 * it is in, this file re-exports the catalog's type instead.
 */
import type { InputAnswer, InputCapabilities, InputRequest } from '../protocol/input-requests.js';
import type { Revision } from '../protocol/revisions.js';

/** How the caller's client answers input requests, per request (built by the dispatcher). */
export interface ClientInput {
    readonly capabilities: InputCapabilities;
    readonly revision: Revision;
    /** A 2025 client: puts one request on the stream of the request being served. Absent: a 2026-07-28 client (input_required + retry). */
    readonly ask?: ((request: InputRequest, signal: AbortSignal) => Promise<InputAnswer>) | undefined;
    /** What sealed state is bound to besides the caller's scope: the anonymous client's address over HTTP; '' otherwise. */
    readonly holder: string;
}
