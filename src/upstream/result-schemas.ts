/**
 * Schemas for the upstream results the SDK (2.4.0) reads too narrowly for a
 * gateway, which should hide nothing: the fields the gateway relies on are
 * checked as strictly as the SDK does, the rest is kept.
 */
import { z } from 'zod';

const Icon = z.looseObject({
    src: z.string(),
    mimeType: z.string().optional(),
    sizes: z.array(z.string()).optional(),
    theme: z.enum(['light', 'dark']).optional()
});

const PromptArgument = z.looseObject({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    required: z.boolean().optional()
});

const PromptEntry = z.looseObject({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    arguments: z.array(PromptArgument).optional(),
    icons: z.array(Icon).optional(),
    _meta: z.looseObject({}).optional()
});

/**
 * A `prompts/list` page. The SDK strips `title` from prompt arguments (a field since 2025-06-18) and any field
 * it does not know.
 */
export const PromptPage = z.looseObject({
    prompts: z.array(PromptEntry),
    nextCursor: z.string().optional(),
    _meta: z.looseObject({}).optional()
});

/**
 * A completion. The SDK refuses one with more than 100 values as an invalid result; the gateway takes it and
 * passes on the first 100 (see the service), as a direct client could have used the rest of the answer.
 */
export const CompletionResult = z.looseObject({
    completion: z.looseObject({ values: z.array(z.string()), total: z.number().int().optional(), hasMore: z.boolean().optional() })
});
