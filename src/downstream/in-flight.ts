/** Counts the prompt requests being served, so a shutdown can wait for them to finish. */
export class InFlight {
    #count = 0;
    #idle: (() => void)[] = [];

    get count(): number {
        return this.#count;
    }

    async track<T>(work: () => Promise<T>): Promise<T> {
        this.#count++;
        try {
            return await work();
        } finally {
            if (--this.#count === 0) for (const resolve of this.#idle.splice(0)) resolve();
        }
    }

    /** Resolves true once nothing is in flight, or false after `timeoutMs`. */
    async drained(timeoutMs: number): Promise<boolean> {
        if (this.#count === 0) return true;
        let timer: NodeJS.Timeout | undefined;
        const idle = new Promise<true>(resolve => this.#idle.push(() => resolve(true)));
        const late = new Promise<false>(resolve => (timer = setTimeout(resolve, timeoutMs, false)));
        try {
            return await Promise.race([idle, late]);
        } finally {
            clearTimeout(timer);
        }
    }
}
