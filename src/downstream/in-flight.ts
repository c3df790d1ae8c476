/**
 * The prompt requests being served: counted, so a shutdown can wait for them,
 * and cancellable all at once, so the ones that outlive the wait still get an
 * answer (an error) instead of a stream that just ends. Each request keeps its
 * own way to fail in a set: no listener per request on a shared signal (which
 * Node reports as a leak beyond ten).
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { whenIdle } from '../lib/when-idle.js';

export class InFlight {
    readonly #failers = new Set<(error: Error) => void>();
    readonly #idle: (() => void)[] = [];
    #refusal: string | undefined;
    #cancelled: ProtocolError | undefined;

    get count(): number {
        return this.#failers.size;
    }

    async track<T>(work: () => Promise<T>): Promise<T> {
        if (this.#refusal !== undefined) throw new ProtocolError(ProtocolErrorCode.InternalError, this.#refusal);
        if (this.#cancelled !== undefined) throw this.#cancelled;
        let fail: (error: Error) => void = () => {};
        const cancelled = new Promise<never>((_resolve, reject) => (fail = reject));
        this.#failers.add(fail);
        try {
            return await Promise.race([work(), cancelled]);
        } finally {
            this.#failers.delete(fail);
            if (this.#failers.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
        }
    }

    /** Later requests fail at once with -32603 and `message`, without starting; those in flight carry on. */
    refuseNew(message: string): void {
        this.#refusal = message;
    }

    /** Every request in flight, and every later one, fails at once with -32603 and `message`. */
    cancelAll(message: string): void {
        this.#cancelled = new ProtocolError(ProtocolErrorCode.InternalError, message);
        for (const fail of this.#failers) fail(this.#cancelled);
    }

    /** Resolves true once nothing is in flight, or false after `timeoutMs`. */
    drained(timeoutMs: number): Promise<boolean> {
        return whenIdle(() => this.#failers.size === 0, this.#idle, timeoutMs);
    }
}
