/**
 * The idle sweep of HTTP sessions: a session with no open response (its GET
 * stream included) and no request here for `idleTimeoutMs` has ended when
 * this process serves the endpoint alone, or, when the replicas share when
 * sessions were last used, once it is quiet on all of them; used on another
 * replica meanwhile, or with replicas that share nothing, it is only let go
 * here, its id still good. Checked a few times per timeout, at least every
 * 250 ms and at most every minute.
 */
import type { Session, SessionTable } from '../sessions.js';

export interface IdleSweep {
    idleTimeoutMs: number;
    /** Whether idleness can end a session (see the module comment); else it is only let go here. */
    idleEnds: boolean;
    /** Ends the session everywhere. */
    end: (session: Session) => void;
    /** Stops serving it here. */
    letGo: (session: Session) => void;
}

/** Starts sweeping; the returned function stops it. */
export function sweepIdleSessions(sessions: SessionTable, sweep: IdleSweep): () => void {
    let sweeping = false;
    const sweeper = setInterval(
        () => {
            if (sweeping) return;
            sweeping = true;
            void sweepOnce(sessions, sweep).finally(() => (sweeping = false));
        },
        Math.min(60_000, Math.max(250, sweep.idleTimeoutMs / 4))
    );
    sweeper.unref();
    return () => clearInterval(sweeper);
}

async function sweepOnce(sessions: SessionTable, sweep: IdleSweep): Promise<void> {
    const since = Date.now() - sweep.idleTimeoutMs;
    const idle = [...sessions.values()].filter(session => session.transport === 'http' && session.idleSince(since));
    if (idle.length === 0) return;
    if (!sweep.idleEnds) return idle.forEach(sweep.letGo);
    const verdicts = await sessions.judgeIdle(idle, since);
    for (const [index, session] of idle.entries()) {
        // Used again (or ended) while the shared state was asked: not idle any more.
        if (sessions.get(session.id) !== session || !session.idleSince(since)) continue;
        if (verdicts[index] === 'ended') sweep.end(session);
        else if (verdicts[index] === 'let-go') sweep.letGo(session);
    }
}
