/**
 * The body of a Claude Code command, a skill or a Codex prompt, compiled once
 * into one user message of text and argument slots (template.ts):
 *
 * - `$1`..`$9` are positional arguments, named by the `argument-hint` tokens
 *   (`[pr-number] [priority]`, `<file>`) in order, `arg1`, `arg2`, ... where
 *   there is no usable token. All optional, as in Claude Code.
 * - `$ARGUMENTS` is every given positional value joined by single spaces; in a
 *   body with no `$1`..`$9` it is one argument named `arguments`.
 * - Claude Code (and skills) append `ARGUMENTS: <what was typed>` to a body
 *   that uses no placeholder: served as an optional `arguments` appended so.
 * - Codex: `$UPPER_CASE` is a named argument, required as Codex requires it; in
 *   a prompt that has one, Codex does not expand `$1`..`$9` or `$ARGUMENTS`
 *   (left as written, with a warning); `$$` stops a placeholder and is kept as
 *   written, as Codex keeps it. Pure.
 */
import type { PromptArgument } from '@modelcontextprotocol/client';
import { ARGUMENT_NAME, MAX_ARGUMENTS, type PromptFileWarning } from '../prompt-file.js';
import { compileMatches, type Segment } from '../template.js';

export type DollarDialect = 'claude' | 'codex';

const CLAUDE_PLACEHOLDER = /\$([1-9])|\$(ARGUMENTS)(?![A-Za-z0-9_])/g;
// `$$` first, so "$$1" is "$$" then "1"; named after ARGUMENTS, so "$ARGUMENTS" is never a name.
const CODEX_PLACEHOLDER = /(\$\$)|\$([1-9])|\$(ARGUMENTS)(?![A-Z0-9_])|\$([A-Z][A-Z0-9_]*)/g;
/** What Claude Code writes before what was typed, appended to a body without placeholders. */
const APPENDED = '\n\nARGUMENTS: ';

export interface CompiledBody {
    segments: Segment[];
    arguments: PromptArgument[];
    warnings: PromptFileWarning[];
}

export class BodyError extends Error {
    constructor(
        message: string,
        /** In the file, where known. */
        readonly line?: number
    ) {
        super(message);
    }
}

interface Usage {
    highest: number;
    all: boolean;
    named: string[];
}

/**
 * `hint` is the front matter's `argument-hint` (YAML may have read `[message]` as a list); `hintLine` finds its line,
 * asked only for a warning (where the plain reader read the front matter, finding a line is a full YAML parse).
 */
export function compileDollarBody(dialect: DollarDialect, body: string, hint: string | readonly string[] | undefined, hintLine: () => number | undefined): CompiledBody {
    const pattern = dialect === 'codex' ? CODEX_PLACEHOLDER : CLAUDE_PLACEHOLDER;
    const usage = usageOf(body, pattern);
    if (usage.named.length > 0) return namedBody(body, pattern, usage);
    const warnings: PromptFileWarning[] = [];
    const hintText = hint === undefined ? undefined : typeof hint === 'string' ? hint : hint.map(token => `[${token}]`).join(' ');
    if (usage.highest === 0) {
        const appended = !usage.all && dialect === 'claude';
        if (!usage.all && !appended) {
            if (hintText !== undefined)
                warnings.push({ line: hintLine(), message: 'argument-hint is given, but the body has no $ARGUMENTS or $1..$9: the prompt takes no arguments' });
            return { segments: compileMatches(body, pattern, literal), arguments: [], warnings };
        }
        const argument: PromptArgument = { name: 'arguments', ...(hintText === undefined ? {} : { description: hintText }) };
        const slot: Segment = appended ? { argument: 'arguments', before: APPENDED } : { argument: 'arguments' };
        const segments = appended ? [...compileMatches(body, pattern, literal), slot] : compileMatches(body, pattern, match => (match[0] === '$$' ? '$$' : slot));
        return { segments, arguments: [argument], warnings };
    }
    const positional = positionalArguments(hint, usage.highest, hintLine, warnings);
    const names = positional.map(argument => argument.name);
    const segments = compileMatches(body, pattern, match => {
        if (match[1] !== undefined && dialect === 'codex') return '$$';
        const digit = match[dialect === 'codex' ? 2 : 1];
        return digit === undefined ? { joined: names } : { argument: names[Number(digit) - 1]! };
    });
    return { segments, arguments: positional, warnings };
}

function usageOf(body: string, pattern: RegExp): Usage {
    const usage: Usage = { highest: 0, all: false, named: [] };
    const codex = pattern === CODEX_PLACEHOLDER;
    for (const match of body.matchAll(pattern)) {
        const [digit, all, named] = codex ? [match[2], match[3], match[4]] : [match[1], match[2], undefined];
        if (digit !== undefined) usage.highest = Math.max(usage.highest, Number(digit));
        else if (all !== undefined) usage.all = true;
        else if (named !== undefined && !usage.named.includes(named)) usage.named.push(named);
    }
    return usage;
}

/** Codex: named placeholders only; positional ones stay text, as Codex leaves them. */
function namedBody(body: string, pattern: RegExp, usage: Usage): CompiledBody {
    if (usage.named.length > MAX_ARGUMENTS) throw new BodyError(`${usage.named.length} named placeholders ($NAME); a prompt takes at most ${MAX_ARGUMENTS} arguments`);
    const warnings: PromptFileWarning[] = [];
    if (usage.highest > 0 || usage.all) {
        warnings.push({
            line: undefined,
            message: `$1..$9 and $ARGUMENTS are left as written: Codex does not expand them in a prompt with named placeholders ($${usage.named[0]})`
        });
    }
    const segments = compileMatches(body, pattern, match => (match[4] === undefined ? match[0] : { argument: match[4] }));
    return { segments, arguments: usage.named.map(name => ({ name, required: true })), warnings };
}

/** Arguments 1..n, n the highest `$n` used or the hint's token count, whichever is larger. */
function positionalArguments(hint: string | readonly string[] | undefined, highest: number, hintLine: () => number | undefined, warnings: PromptFileWarning[]): PromptArgument[] {
    const tokens = hintTokens(hint);
    if (tokens === undefined && typeof hint === 'string') {
        warnings.push({ line: hintLine(), message: 'argument-hint is not a list of [name] or <name>: the positional arguments are named arg1, arg2, ...' });
    }
    const count = Math.min(MAX_ARGUMENTS, Math.max(highest, tokens?.length ?? 0));
    const taken = new Set<string>();
    return Array.from({ length: count }, (_, index): PromptArgument => {
        const token = tokens?.[index];
        const name = token === undefined ? undefined : argumentNameOf(token);
        if (name !== undefined && !taken.has(name)) {
            taken.add(name);
            return { name };
        }
        // argN, or the next one free: a hint may have given "arg2" to an earlier argument.
        let number = index + 1;
        while (taken.has(`arg${number}`)) number++;
        const fallback = `arg${number}`;
        taken.add(fallback);
        return { name: fallback, ...(token === undefined ? {} : { description: token }) };
    });
}

/** `[pr-number] [priority]`, `<file>` or `[a, b]`: the names in brackets; undefined when the hint is anything else (`add [id] | list`). */
function hintTokens(hint: string | readonly string[] | undefined): string[] | undefined {
    if (hint === undefined) return undefined;
    if (typeof hint !== 'string') return [...hint];
    // `[a, b]` (a YAML list, as some write it) is two names.
    const tokens = [...hint.matchAll(/\[([^\][]*)\]|<([^<>]*)>/g)].flatMap(match => (match[1] ?? match[2])!.split(',').map(token => token.trim()));
    const rest = hint.replace(/\[[^\][]*\]|<[^<>]*>/g, '');
    return tokens.length > 0 && rest.trim() === '' ? tokens : undefined;
}

/** `pr-number`, `files...`, `PR number` (spaces become "-"); undefined when the token makes no argument name. */
function argumentNameOf(token: string): string | undefined {
    const name = token
        .replace(/(?:\.\.\.|…)$/, '')
        .trim()
        .replace(/\s+/g, '-');
    return name.length <= 64 && ARGUMENT_NAME.test(name) ? name : undefined;
}

/** Outside a slot a match stays as written. */
const literal = (match: RegExpExecArray): Segment => match[0];
