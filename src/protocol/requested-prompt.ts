/**
 * The prompt a request names, as its client sent it: `params.name` of prompts/get, `params.ref.name` of a
 * completion/complete on a prompt (`ref/prompt`); undefined for other methods, a resource reference or a name that is
 * not a string. Unchecked: whether it names a prompt the caller may see is the catalog's to say.
 */
export function requestedPromptName(method: string, params: unknown): string | undefined {
    const { name, ref } = (params ?? {}) as { name?: unknown; ref?: { type?: unknown; name?: unknown } };
    const named = method === 'prompts/get' ? name : method === 'completion/complete' && ref?.type === 'ref/prompt' ? ref.name : undefined;
    return typeof named === 'string' ? named : undefined;
}
