/**
 * Redaction of known secret values from text, wherever they appear in it:
 * a log line as written (JSON, so a value with quotes or backslashes appears
 * escaped, and both forms are looked for), including text that came from an
 * upstream. One regular expression over every value, longest first, so a
 * header value goes whole before the token inside it.
 */
const REDACTED = '[redacted]';

export class Redactor {
    #pattern: RegExp | undefined;

    constructor(secrets: Iterable<string> = []) {
        this.update(secrets);
    }

    /** Replaces the values looked for (a reload's config). Empty strings are ignored. */
    update(secrets: Iterable<string>): void {
        const forms = new Set<string>();
        for (const secret of secrets) {
            if (secret === '') continue;
            forms.add(secret);
            forms.add(JSON.stringify(secret).slice(1, -1));
        }
        const sorted = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
        this.#pattern = sorted.length === 0 ? undefined : new RegExp(sorted.join('|'), 'g');
    }

    redact(text: string): string {
        return this.#pattern === undefined ? text : text.replace(this.#pattern, REDACTED);
    }
}

function escapeRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
