/**
 * The catalog page's pure text logic, free of the DOM so Node unit tests import it as the browser does: which upstream
 * a name belongs to, search, what changed between two lists, and the texts of the copy buttons (the rendered text,
 * Claude Code's and VS Code's slash commands, an Inspector command line).
 *
 * The copied commands never hold the visitor's credential: where the gateway wants one, the Inspector command names a
 * shell variable ($GATEWAY_KEY) instead, so a pasted command in a chat or a ticket gives nothing away.
 */

/**
 * @typedef {{ name: string, description?: string, required?: boolean }} PromptArgument
 * @typedef {{ name: string, title?: string, description?: string, arguments?: PromptArgument[] }} Prompt
 * @typedef {{ type?: string, text?: string, mimeType?: string, data?: string, uri?: string, name?: string,
 *     resource?: { uri?: string, mimeType?: string, text?: string, blob?: string } }} ContentBlock
 * @typedef {{ role?: string, content?: ContentBlock | ContentBlock[] }} PromptMessage
 */

/**
 * The upstream of an exposed name: the text before the first separator (exposed names are `<id><separator><name>`).
 * Undefined for a name without one, or with nothing before it (an upstream with `namespace: false`).
 * @param {string} name
 * @param {string} separator
 * @returns {string | undefined}
 */
export function upstreamOf(name, separator) {
    if (separator === '') return undefined;
    const at = name.indexOf(separator);
    return at > 0 ? name.slice(0, at) : undefined;
}

/**
 * What a search looks in for a prompt: its exposed name, title, description and argument names, lower-cased. Made once
 * per list, not per keystroke (a list holds up to 100 000 prompts).
 * @param {Prompt} prompt
 * @returns {string}
 */
export function searchText(prompt) {
    const argumentNames = Array.isArray(prompt.arguments) ? prompt.arguments.map(argument => argument?.name) : [];
    return [prompt.name, prompt.title, prompt.description, ...argumentNames]
        .filter(part => typeof part === 'string')
        .join('\n')
        .toLowerCase();
}

/**
 * The terms of a search query: its whitespace-separated words, lower-cased; none for an empty query.
 * @param {string} query
 * @returns {string[]}
 */
export function searchTerms(query) {
    return query
        .toLowerCase()
        .split(/\s+/)
        .filter(term => term !== '');
}

/**
 * Whether a prompt's searchText holds every term (no terms: every prompt matches).
 * @param {string} text
 * @param {string[]} terms
 */
export function matchesTerms(text, terms) {
    return terms.every(term => text.includes(term));
}

/**
 * A JSON text of a value whose object keys are sorted, so two prompts that differ only in key order compare equal.
 * @param {unknown} value
 * @returns {string}
 */
function canonicalJson(value) {
    if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
    if (value !== null && typeof value === 'object') {
        const entries = Object.entries(value)
            .filter(([, inner]) => inner !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
    }
    return JSON.stringify(value) ?? 'null';
}

/**
 * What changed from one list to the next, by exposed name; a prompt whose definition differs in anything (title,
 * description, arguments, _meta ...) is changed. Each list of names in the order of the list it comes from.
 * @param {Prompt[]} before
 * @param {Prompt[]} after
 * @returns {{ added: string[], removed: string[], changed: string[] }}
 */
export function diffPrompts(before, after) {
    const old = new Map(before.map(prompt => [prompt.name, canonicalJson(prompt)]));
    const now = new Set(after.map(prompt => prompt.name));
    const added = [];
    const changed = [];
    for (const prompt of after) {
        const previous = old.get(prompt.name);
        if (previous === undefined) added.push(prompt.name);
        else if (previous !== canonicalJson(prompt)) changed.push(prompt.name);
    }
    const removed = before.map(prompt => prompt.name).filter(name => !now.has(name));
    return { added, removed, changed };
}

/** Names listed in one announcement before "and N more": enough to read, short enough for a screen reader. */
const NAMES_SHOWN = 5;

/**
 * @param {string[]} names
 */
function nameList(names) {
    const shown = names.slice(0, NAMES_SHOWN).join(', ');
    return names.length > NAMES_SHOWN ? `${shown} and ${names.length - NAMES_SHOWN} more` : shown;
}

/**
 * The sentence announced for a change, e.g. "Prompts updated: 1 added (team__new), 1 removed (team__old)"; undefined
 * when nothing changed.
 * @param {{ added: string[], removed: string[], changed: string[] }} changes
 * @returns {string | undefined}
 */
export function describeChanges(changes) {
    const parts = /** @type {const} */ (['added', 'removed', 'changed'])
        .filter(kind => changes[kind].length > 0)
        .map(kind => `${changes[kind].length} ${kind} (${nameList(changes[kind])})`);
    return parts.length === 0 ? undefined : `Prompts updated: ${parts.join(', ')}`;
}

/**
 * "12 prompts" or, with a search or filter active, "3 of 12 prompts".
 * @param {number} shown
 * @param {number} total
 * @param {boolean} filtered
 */
export function countText(shown, total, filtered) {
    const noun = total === 1 ? 'prompt' : 'prompts';
    return filtered ? `${shown} of ${total} ${noun}` : `${total} ${noun}`;
}

/**
 * The size in bytes of base64 data, without decoding it.
 * @param {string} base64
 */
export function base64Bytes(base64) {
    const clean = base64.replace(/\s+/g, '');
    const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
    return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/**
 * The content blocks of a message: one block in every revision so far, a list tolerated.
 * @param {PromptMessage} message
 * @returns {ContentBlock[]}
 */
export function blocksOf(message) {
    const content = message?.content;
    if (Array.isArray(content)) return content.filter(block => block !== null && typeof block === 'object');
    return content !== null && typeof content === 'object' ? [content] : [];
}

/**
 * One block as text for the "Copy text" button: text as is, an embedded text resource's text, anything else a
 * bracketed stand-in such as "[image: image/png]".
 * @param {ContentBlock} block
 */
function blockText(block) {
    switch (block.type) {
        case 'text':
            return typeof block.text === 'string' ? block.text : '';
        case 'resource':
            if (typeof block.resource?.text === 'string') return block.resource.text;
            return `[resource: ${block.resource?.uri ?? ''} (${block.resource?.mimeType ?? 'binary'})]`;
        case 'resource_link':
            return `[resource link: ${block.uri ?? ''}]`;
        default:
            return `[${block.type ?? 'content'}: ${block.mimeType ?? 'unknown type'}]`;
    }
}

/**
 * The text of a prompts/get result as a client would paste it: each message's blocks, messages separated by a blank
 * line, no role prefixes.
 * @param {{ messages?: PromptMessage[] }} result
 */
export function resultText(result) {
    const messages = Array.isArray(result?.messages) ? result.messages : [];
    return messages.map(message => blocksOf(message).map(blockText).join('\n')).join('\n\n');
}

/**
 * A form's value for an argument name, or '' when it has none: own properties only, as names come from upstreams
 * (`constructor`, `toString` and `__proto__` are argument names like any other).
 * @param {Record<string, string>} values
 * @param {string} name
 * @returns {string}
 */
export function valueOf(values, name) {
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    return typeof value === 'string' ? value : '';
}

/**
 * The non-empty values of a form, in the prompt's argument order (names the prompt does not declare last, in the
 * order given).
 * @param {PromptArgument[]} declared
 * @param {Record<string, string>} values
 * @returns {[string, string][]}
 */
export function filledArguments(declared, values) {
    const order = declared.map(argument => argument.name);
    const declaredNames = new Set(order);
    const names = [...order, ...Object.keys(values).filter(name => !declaredNames.has(name))];
    return names.filter(name => valueOf(values, name) !== '').map(name => [name, valueOf(values, name)]);
}

/**
 * Claude Code's slash command, `/mcp__<server>__<prompt>` and the values by position in argument order, up to the
 * last filled one, and whether Claude Code can pass them as they are. It splits what follows the command on spaces,
 * without quoting, and fills the arguments in order: a value with whitespace becomes several, and an empty value
 * before a filled one cannot be written at all (the next value would take its place).
 * @param {{ serverName: string, name: string, declared: PromptArgument[], values: Record<string, string> }} options
 * @returns {{ command: string, passable: boolean }}
 */
export function claudeCodeCommand({ serverName, name, declared, values }) {
    const positional = declared.map(argument => valueOf(values, argument.name));
    let last = positional.length - 1;
    while (last >= 0 && positional[last] === '') last--;
    const words = positional.slice(0, last + 1);
    const passable = words.every(word => word !== '' && !/\s/.test(word));
    return { command: [`/mcp__${serverName}__${name}`, ...words.filter(word => word !== '')].join(' '), passable };
}

/** What the copy status says when claudeCodeCommand's values cannot be passed as they are. */
export const CLAUDE_CODE_CAVEAT =
    'Claude Code cannot pass these values as they are: it splits arguments on spaces and fills them in order, so a value with spaces or an empty argument before a filled one shifts the rest. Use the Inspector command or the VS Code form instead.';

/**
 * VS Code's slash command, `/mcp.<server>.<prompt>` (VS Code 1.101 release notes, "MCP support for prompts"): VS Code
 * asks for the arguments itself, one input box each.
 * @param {{ serverName: string, name: string }} options
 */
export function vscodeCommand({ serverName, name }) {
    return `/mcp.${serverName}.${name}`;
}

/**
 * A word for a POSIX shell: as is when it holds only characters no shell treats specially, else single-quoted with
 * each `'` written as `'\''`.
 * @param {string} word
 */
export function shellQuote(word) {
    return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : singleQuoted(word);
}

/**
 * @param {string} word
 */
function singleQuoted(word) {
    return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * The Inspector's command line for this prompts/get (docs/inspector.md). With auth on, the header names the shell
 * variable $GATEWAY_KEY, never the credential.
 * @param {{ url: string, name: string, declared: PromptArgument[], values: Record<string, string>, authenticated: boolean }} options
 */
export function inspectorCommand({ url, name, declared, values, authenticated }) {
    const words = ['npx', '@modelcontextprotocol/inspector', '--cli', shellQuote(url), '--method', 'prompts/get', '--prompt-name', shellQuote(name)];
    // Double quotes, so the shell expands the variable.
    if (authenticated) words.push('--header', '"Authorization: Bearer $GATEWAY_KEY"');
    const args = filledArguments(declared, values);
    // Always quoted, as docs/inspector.md writes them: a value is the part a reader edits.
    if (args.length > 0) words.push('--prompt-args', ...args.map(([key, value]) => singleQuoted(`${key}=${value}`)));
    return words.join(' ');
}
