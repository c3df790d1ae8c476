/**
 * Text from outside (a file's name, a message quoting it) made safe to print as
 * one line of a terminal or CI log: control characters, line and paragraph
 * separators and bidirectional overrides are written as escapes (`\n`,
 * `\u202e`), so a file named "x\nerror: ..." cannot forge a line of output nor
 * reorder what is shown. Everything else is kept as written. Pure.
 */
const UNSAFE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

export function oneLine(text: string): string {
    return text.replace(UNSAFE, character => {
        const escaped = JSON.stringify(character).slice(1, -1);
        return escaped.length > 1 ? escaped : unicodeEscape(character);
    });
}

/** One UTF-16 unit as JSON (and JavaScript) escapes it: `\u009b`. */
export function unicodeEscape(character: string): string {
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
