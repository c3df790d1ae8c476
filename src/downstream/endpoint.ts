/** Why the gateway ended a client's stream: it stopped reading, or a reload took its client or credentials away. */
export type StreamCloseReason = 'slow_consumer' | 'client_revoked';

/** What the gateway needs of a downstream endpoint (HTTP or stdio) to stop it gracefully. */
export interface Endpoint {
    /** Stops taking requests; those in flight carry on. */
    drain(): void;
    /** Resolves true once every request taken has its answer written, or false after `timeoutMs`. */
    settled(timeoutMs: number): Promise<boolean>;
    /** Closes every session and the transport. */
    close(): Promise<void>;
}
