/** ECONNREFUSED, ENOENT, ...: from the error or its cause (fetch wraps them). Safe to show: no values inside. */
export function systemErrorCode(error: unknown): string | undefined {
    for (let current = error, depth = 0; current instanceof Error && depth < 3; current = current.cause, depth++) {
        const code = (current as NodeJS.ErrnoException).code;
        if (typeof code === 'string' && /^(E|UND_ERR_)[A-Z0-9_]{2,30}$/.test(code)) return code;
    }
    return undefined;
}
