/**
 * An upstream's prompt definitions are untrusted input: each one is checked
 * where it enters, so nothing after this (names, fingerprints, pages, JSON
 * serialisation for clients) meets a definition too deep or too large to handle.
 * An over-limit prompt is left out on its own; its siblings stay.
 */
import type { Prompt } from '@modelcontextprotocol/client';
import { shortDigest } from '../lib/digest.js';
import { exceedsDepth } from '../lib/json-bounds.js';

export interface PromptLimits {
    /** Largest definition, as JSON bytes. */
    maxPromptBytes: number;
    maxJsonDepth: number;
}

/** A prompt that passed the limits, with a digest of its definition (what clients would see of it, bar its name). */
export interface UpstreamPrompt {
    prompt: Prompt;
    digest: string;
    /** Its definition's size as JSON, in UTF-8 bytes: what it costs against the list's budget. */
    bytes: number;
}

export type PromptRejection = 'too_deep' | 'too_large';

export function boundPrompt(prompt: Prompt, limits: PromptLimits): UpstreamPrompt | PromptRejection {
    if (exceedsDepth(prompt, limits.maxJsonDepth)) return 'too_deep';
    const json = JSON.stringify(prompt);
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > limits.maxPromptBytes) return 'too_large';
    return { prompt, digest: shortDigest(json), bytes };
}
