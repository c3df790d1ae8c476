/**
 * Whether one connection to an upstream is still alive. A hung stdio child or
 * an HTTP server that died mid-response does not close the connection, so the
 * only sign is silence: anything the upstream sends proves it is there, and
 * silence is probed with pings, whether requests are in flight or not (a hung
 * upstream under steady load is never idle). Requests that time out in a row
 * and pings that go unanswered declare the connection dead, once.
 */
import { connectionEvidence, failureReason } from './errors.js';

/** Request timeouts in a row, with nothing heard in between, that mean the upstream hangs rather than is slow. */
const UNANSWERED_REQUESTS_LIMIT = 3;
const UNANSWERED_PINGS_LIMIT = 2;

export interface LivenessOptions {
    /** Ping when nothing was heard for this long; 0: no regular pings. */
    pingIntervalMs: number;
    pingTimeoutMs: number;
    /** Timeout of the ping sent when the transport reports an error: short, since the caller suspects the worst. */
    checkTimeoutMs: number;
    /** Rejects as the client's requests do (ProtocolError for a JSON-RPC error reply, SdkError on timeout, ...). */
    ping: (timeoutMs: number) => Promise<unknown>;
    /** Called at most once, then the watch stops. */
    onDead: (reason: string) => void;
    now?: () => number;
}

export class Liveness {
    readonly #options: LivenessOptions;
    readonly #now: () => number;
    #lastHeard: number;
    #unansweredRequests = 0;
    #unansweredPings = 0;
    #pinging = false;
    #stopped = false;
    #timer: NodeJS.Timeout | undefined;

    constructor(options: LivenessOptions) {
        this.#options = options;
        this.#now = options.now ?? Date.now;
        this.#lastHeard = this.#now();
        this.#schedule(options.pingIntervalMs);
    }

    /** The upstream sent something: a response (even an error or a late one) or a notification. */
    heard(): void {
        this.#lastHeard = this.#now();
        this.#unansweredRequests = 0;
        this.#unansweredPings = 0;
    }

    requestTimedOut(): void {
        if (++this.#unansweredRequests >= UNANSWERED_REQUESTS_LIMIT) this.#die(`no answer to ${UNANSWERED_REQUESTS_LIMIT} requests in a row`);
    }

    /**
     * The transport reported an error that may or may not have cost the connection (an HTTP response stream cut
     * off, or a harmless refused GET stream): ask the upstream at once. Errors in a burst share one check.
     */
    suspect(): void {
        void this.#ping(this.#options.checkTimeoutMs, 'check');
    }

    stop(): void {
        this.#stopped = true;
        clearTimeout(this.#timer);
    }

    #schedule(delayMs: number): void {
        if (this.#options.pingIntervalMs === 0 || this.#stopped) return;
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => void this.#tick(), delayMs).unref();
    }

    async #tick(): Promise<void> {
        const interval = this.#options.pingIntervalMs;
        const quietFor = this.#now() - this.#lastHeard;
        if (quietFor < interval) return this.#schedule(interval - quietFor);
        await this.#ping(this.#options.pingTimeoutMs, 'regular');
        this.#schedule(interval);
    }

    async #ping(timeoutMs: number, kind: 'regular' | 'check'): Promise<void> {
        if (this.#pinging || this.#stopped) return;
        this.#pinging = true;
        try {
            await this.#options.ping(timeoutMs);
            this.heard();
        } catch (error) {
            if (!this.#stopped) this.#judgeFailedPing(error, timeoutMs, kind);
        } finally {
            this.#pinging = false;
        }
    }

    #judgeFailedPing(error: unknown, timeoutMs: number, kind: 'regular' | 'check'): void {
        const evidence = connectionEvidence(error);
        if (evidence === 'answered') return this.heard();
        if (evidence === 'gone') return this.#die(failureReason(error, timeoutMs));
        // A check is only for a connection that is gone or silent: other errors (an HTTP 500) are not its business.
        if (kind === 'check') {
            if (evidence === 'no-answer') this.#die(`no answer to ping within ${timeoutMs} ms`);
            return;
        }
        if (++this.#unansweredPings >= UNANSWERED_PINGS_LIMIT) this.#die(`no answer to ${UNANSWERED_PINGS_LIMIT} pings in a row`);
    }

    #die(reason: string): void {
        if (this.#stopped) return;
        this.stop();
        this.#options.onDead(reason);
    }
}
