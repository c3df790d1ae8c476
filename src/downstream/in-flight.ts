/**
 * The prompt requests being served: counted, so a shutdown can wait for them,
 * and cancellable all at once, so the ones that outlive the wait still get an
 * answer (an error) instead of a stream that just ends.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { whenIdle } from '../lib/when-idle.js';

export class InFlight {
    #count = 0;
    readonly #idle: (() => void)[] = [];
    readonly #cancel = new AbortController();
    #refusal: string | undefined;

    get count(): number {
        return this.#count;
    }

    async track<T>(work: () => Promise<T>): Promise<T> {
        if (this.#refusal !== undefined) throw new ProtocolError(ProtocolErrorCode.InternalError, this.#refusal);
        this.#count++;
        const signal = this.#cancel.signal;
        let onCancel = () => {};
        const cancelled = new Promise<never>((_resolve, reject) => {
            onCancel = () => reject(signal.reason as Error);
            if (signal.aborted) onCancel();
            else signal.addEventListener('abort', onCancel, { once: true });
        });
        try {
            return await Promise.race([work(), cancelled]);
        } finally {
            signal.removeEventListener('abort', onCancel);
            if (--this.#count === 0) for (const resolve of this.#idle.splice(0)) resolve();
        }
    }

    /** Later requests fail at once with -32603 and `message`, without starting; those in flight carry on. */
    refuseNew(message: string): void {
        this.#refusal = message;
    }

    /** Every request in flight, and every later one, fails at once with -32603 and `message`. */
    cancelAll(message: string): void {
        this.#cancel.abort(new ProtocolError(ProtocolErrorCode.InternalError, message));
    }

    /** Resolves true once nothing is in flight, or false after `timeoutMs`. */
    drained(timeoutMs: number): Promise<boolean> {
        return whenIdle(() => this.#count === 0, this.#idle, timeoutMs);
    }
}
