/**
 * The idle sweep of HTTP sessions: a session with no open response (its GET
 * stream included) and no request for `idleTimeoutMs` is closed. Checked a few
 * times per timeout, at least every 250 ms and at most every minute.
 */
import type { Session, SessionTable } from '../sessions.js';

/** Starts sweeping; the returned function stops it. */
export function sweepIdleSessions(sessions: SessionTable, idleTimeoutMs: number, close: (session: Session) => void): () => void {
    const sweeper = setInterval(() => {
        const idleSince = Date.now() - idleTimeoutMs;
        for (const session of sessions.values()) {
            if (session.transport === 'http' && session.idleSince(idleSince)) close(session);
        }
    }, Math.min(60_000, Math.max(250, idleTimeoutMs / 4)));
    sweeper.unref();
    return () => clearInterval(sweeper);
}
