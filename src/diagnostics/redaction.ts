/**
 * Redaction of known secret values from text, wherever they appear in it:
 * a log line as written (JSON, so a value with quotes or backslashes appears
 * escaped, and both forms are looked for), including text that came from an
 * upstream; every string of what the operator endpoints serve (health, the
 * dashboard's data) and the metrics text. One regular expression over every
 * value, longest first, so a header value goes whole before the token inside
 * it. Two sources: the
 * config's secrets, per logger, and the secrets the process learns as it runs
 * (access tokens an upstream's authorization server issued), for every logger.
 */
const REDACTED = '[redacted]';

/** Secrets learned at run time, by owner (one token source each), and a count of changes to them. */
const learned = new Map<object, readonly string[]>();
let learnedVersion = 0;

/**
 * Sets the secrets `owner` holds now (replacing those it held before); an empty list forgets them. Every logger
 * redacts them from then on.
 */
export function setLearnedSecrets(owner: object, secrets: readonly string[]): void {
    if (secrets.length === 0) learned.delete(owner);
    else learned.set(owner, secrets);
    learnedVersion++;
}

export class Redactor {
    #configured: string[] = [];
    #pattern: RegExp | undefined;
    #builtFor = -1;

    constructor(secrets: Iterable<string> = []) {
        this.update(secrets);
    }

    /** Replaces the values looked for (a reload's config). Empty strings are ignored. */
    update(secrets: Iterable<string>): void {
        this.#configured = [...secrets];
        this.#build();
    }

    redact(text: string): string {
        if (this.#builtFor !== learnedVersion) this.#build();
        return this.#pattern === undefined ? text : text.replace(this.#pattern, REDACTED);
    }

    /** A copy of JSON-like `value` with each string redacted (keys are the code's own names and ids, kept). */
    redactValues<T>(value: T): T {
        if (this.#builtFor !== learnedVersion) this.#build();
        return this.#pattern === undefined ? value : (this.#redactValue(value) as T);
    }

    #redactValue(value: unknown): unknown {
        if (typeof value === 'string') return this.redact(value);
        if (Array.isArray(value)) return value.map(item => this.#redactValue(item));
        // Object.fromEntries defines own properties, so a "__proto__" key stays plain data.
        if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.#redactValue(item)]));
        return value;
    }

    #build(): void {
        const forms = new Set<string>();
        for (const secret of [...this.#configured, ...[...learned.values()].flat()]) {
            if (secret === '') continue;
            forms.add(secret);
            forms.add(JSON.stringify(secret).slice(1, -1));
        }
        const sorted = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
        this.#pattern = sorted.length === 0 ? undefined : new RegExp(sorted.join('|'), 'g');
        this.#builtFor = learnedVersion;
    }
}

function escapeRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
