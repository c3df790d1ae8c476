/**
 * "Did you mean ...?" for a config key the schema does not know: the nearest
 * key the schema allows at the same place, when it is near enough to be a typo
 * (Levenshtein distance, fastest-levenshtein). The allowed keys are read off
 * the zod schema itself, so the suggestion can never name a key that does not
 * exist; where the place is one of several object shapes (an upstream's
 * transport), the shape the input names is taken, or all of them.
 */
import { distance } from 'fastest-levenshtein';
import type { z } from 'zod';
import { isRecord } from '../lib/is-record.js';

type Schema = z.core.$ZodType;

/** The nearest allowed key to `unknown` at `path` of `root` (the document as given), if one is near enough. */
export function nearestKey(schema: Schema, path: readonly PropertyKey[], root: unknown, unknown: string): string | undefined {
    const allowed = keysAt(schema, path, root);
    let best: { key: string; distance: number } | undefined;
    for (const key of allowed) {
        const apart = distance(unknown.toLowerCase(), key.toLowerCase());
        if (apart <= typoLimit(unknown) && (best === undefined || apart < best.distance)) best = { key, distance: apart };
    }
    return best?.key;
}

/** Two-letter keys tolerate one edit, longer ones two or three (a swapped pair of letters is two: "ulr"). */
function typoLimit(key: string): number {
    if (key.length <= 2) return 1;
    return key.length <= 8 ? 2 : 3;
}

/** Every key an object at `path` may have (the document tells which shape of a union it is). */
function keysAt(schema: Schema, path: readonly PropertyKey[], value: unknown): string[] {
    const keys = new Set<string>();
    for (const shape of shapesAt(schema, path, value)) for (const key of Object.keys(shape)) keys.add(key);
    return [...keys];
}

function shapesAt(schema: Schema, path: readonly PropertyKey[], value: unknown): Record<string, Schema>[] {
    const objects = objectsOf(schema, value);
    if (path.length === 0) return objects.map(object => object._zod.def.shape);
    const [head, ...rest] = path;
    const child = isRecord(value) || Array.isArray(value) ? (value as Record<PropertyKey, unknown>)[head as string] : undefined;
    return [
        ...objects.flatMap(object => {
            const field = object._zod.def.shape[String(head)];
            return field === undefined ? [] : shapesAt(field, rest, child);
        }),
        ...elementsOf(schema).flatMap(element => shapesAt(element, rest, child))
    ];
}

/** The object schemas `schema` may be, past wrappers; of a union, the options that fit `value`'s discriminator. */
function objectsOf(schema: Schema, value: unknown): z.core.$ZodObject[] {
    const def = unwrap(schema)._zod.def;
    if (def.type === 'object') return [unwrap(schema) as z.core.$ZodObject];
    if (def.type !== 'union') return [];
    const options = (def as z.core.$ZodUnionDef).options.flatMap(option => objectsOf(option, value));
    const fitting = options.filter(option => fits(option, value));
    return fitting.length > 0 ? fitting : options;
}

function elementsOf(schema: Schema): Schema[] {
    const def = unwrap(schema)._zod.def;
    return def.type === 'array' ? [(def as z.core.$ZodArrayDef).element] : [];
}

/** Whether every literal field of the object schema (a discriminator) has the value `value` gives it. */
function fits(object: z.core.$ZodObject, value: unknown): boolean {
    if (!isRecord(value)) return false;
    return Object.entries(object._zod.def.shape).every(([key, field]) => {
        const def = unwrap(field)._zod.def;
        return def.type !== 'literal' || (def as z.core.$ZodLiteralDef<z.core.util.Literal>).values.includes(value[key] as z.core.util.Literal);
    });
}

/** Past default, prefault, optional, nullable, readonly and pipe (its input side). */
function unwrap(schema: Schema): Schema {
    let current = schema;
    for (let depth = 0; depth < 16; depth++) {
        const def = current._zod.def as { type: string; innerType?: Schema; in?: Schema };
        if (def.innerType !== undefined) current = def.innerType;
        else if (def.type === 'pipe' && def.in !== undefined) current = def.in;
        else return current;
    }
    return current;
}
