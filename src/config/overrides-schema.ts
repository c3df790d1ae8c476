/**
 * Per-upstream overrides of how its prompts appear to clients (docs/overrides.md): the config shape, its bounds,
 * and the checks that need the whole config (renames that would clash, defaults over the argument size limit).
 * Whether an override names a prompt the upstream lists is only known at runtime: that is reported, not refused.
 */
import { z } from 'zod';

/** Rename targets: the characters MCP clients reliably accept in a prompt name (the spec's tool-name set). */
const PROMPT_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

const MAX_OVERRIDES = 1000;
const MAX_ARGUMENT_OVERRIDES = 64;
const MAX_NAME_CHARS = 1024;

const text = (max: number, what: string) =>
    z
        .string()
        .max(max, { message: `must be at most ${max} characters` })
        .describe(what);

const ArgumentOverrideSchema = z
    .strictObject({
        description: text(4096, "Replaces the argument's description.").optional(),
        default: z.string().describe('Filled in when the client leaves the argument out; the argument is then listed as not required.').optional()
    })
    .describe('How one argument appears, and its default.');

const PromptOverrideSchema = z
    .strictObject({
        name: z
            .string()
            .regex(PROMPT_NAME_PATTERN, { message: 'must be 1-128 letters, digits, "_", "-" or "." (a valid prompt name)' })
            .describe(
                'Exposes the prompt under this name instead (still prefixed with "<id><separator>" when namespaced); gets and completions reach the upstream under its own name.'
            )
            .optional(),
        title: text(256, "Replaces the prompt's title.").optional(),
        description: text(16_384, "Replaces the prompt's description.").optional(),
        arguments: z
            .record(z.string().min(1).max(MAX_NAME_CHARS), ArgumentOverrideSchema)
            .refine(record => Object.keys(record).length <= MAX_ARGUMENT_OVERRIDES, { message: `at most ${MAX_ARGUMENT_OVERRIDES} arguments per prompt` })
            .describe('By argument name as the prompt declares it.')
            .optional()
    })
    .describe('What clients see of one prompt instead of what the upstream says.');

export const OverridesSchema = z
    .record(z.string().min(1).max(MAX_NAME_CHARS), PromptOverrideSchema)
    .refine(record => Object.keys(record).length <= MAX_OVERRIDES, { message: `at most ${MAX_OVERRIDES} prompts per upstream` })
    .default({})
    .describe(
        'By prompt name as the upstream lists it: a new name, title, description, argument descriptions and defaults shown to clients (docs/overrides.md). Names matching no prompt are reported in the log and /healthz. Changes apply on reload without reconnecting.'
    );

type UpstreamOverridesConfig = z.infer<typeof OverridesSchema>;

interface Checked {
    id: string;
    namespace: boolean;
    overrides: UpstreamOverridesConfig;
}

/**
 * Renames that would make two prompts of one upstream share a name (two overrides ending on one name), a rename of a
 * non-namespaced upstream into a namespaced upstream's namespace, and defaults larger than limits.maxArgumentBytes.
 */
export function checkOverrides(
    upstream: Checked,
    context: { path: (string | number)[]; separator: string; namespacedIds: ReadonlySet<string>; maxArgumentBytes: number },
    ctx: z.RefinementCtx
): void {
    const finalNames = new Map<string, string>();
    for (const [original, override] of Object.entries(upstream.overrides)) {
        const at = [...context.path, 'overrides', original];
        const final = override.name ?? original;
        const other = finalNames.get(final);
        if (other !== undefined) {
            ctx.addIssue({
                code: 'custom',
                path: override.name === undefined ? at : [...at, 'name'],
                message: `two prompts of upstream "${upstream.id}" would both be named "${final}" (also "${other}"); give one of them another name`
            });
        }
        finalNames.set(final, original);
        if (override.name !== undefined && !upstream.namespace) {
            const prefix = override.name.split(context.separator)[0]!;
            if (prefix !== override.name && context.namespacedIds.has(prefix)) {
                ctx.addIssue({
                    code: 'custom',
                    path: [...at, 'name'],
                    message: `"${override.name}" lies in the namespace of upstream "${prefix}" (names "${prefix}${context.separator}..." are reserved for it); pick a name without that prefix`
                });
            }
        }
        for (const [argument, argumentOverride] of Object.entries(override.arguments ?? {})) {
            const fallback = argumentOverride.default;
            if (fallback !== undefined && Buffer.byteLength(fallback, 'utf8') > context.maxArgumentBytes) {
                ctx.addIssue({
                    code: 'custom',
                    path: [...at, 'arguments', argument, 'default'],
                    message: `is larger than limits.maxArgumentBytes (${context.maxArgumentBytes} bytes); shorten it or raise the limit`
                });
            }
        }
    }
}
