/**
 * What naming a 2025 session costs per request, in the bench process (no HTTP): opening its sealed id
 * (`SessionSeal.open`: AES-256-GCM and a JSON parse) with a ring of one key and of three (the id sealed by the
 * oldest), and `SessionTable.resolve` for a session this process holds (a Map lookup and the revocation check) and
 * for one sealed elsewhere, brought in the first time (open, plus the session's place in the table and in change
 * delivery). Against what the old design did per request: a Map lookup of a UUID among the held sessions.
 *
 * The measures take turns round by round, after a warm-up of as many calls; each is the median of its rounds.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { CatalogChange } from '../../src/catalog/catalog.js';
import { ChangeDelivery } from '../../src/downstream/delivery.js';
import { LocalRevocations } from '../../src/downstream/revocations.js';
import { SessionSeal } from '../../src/downstream/session-seal.js';
import { SessionTable } from '../../src/downstream/sessions.js';
import { RequestRegistry } from '../../src/downstream/requests.js';
import { Bus } from '../../src/lib/bus.js';

export interface SessionIdOptions {
    /** Calls per round of each measure. */
    iterations: number;
    rounds: number;
    /** Sessions held (and UUIDs in the old design's map). */
    held: number;
}

export interface SessionIdRow {
    measure: string;
    /** Median over the rounds, nanoseconds per call. */
    nsPerOp: number;
}

export interface SessionIdResult extends SessionIdOptions {
    rows: SessionIdRow[];
}

export const MAP_LOOKUP = 'Map lookup of a UUID (the old design)';

const SECRETS = ['bench-session-secret-newest-0032', 'bench-session-secret-middle-0032', 'bench-session-secret-oldest-0032'];
const CLIENT = 'bench-client';
const FIELDS = { clientId: CLIENT, quotaKey: CLIENT, protocolVersion: '2025-06-18', completions: true };

interface Measure {
    measure: string;
    /** Untimed, before each round (a table emptied again). */
    before?: () => void;
    op: (i: number) => unknown;
}

function table(seal: SessionSeal, max: number): SessionTable {
    const delivery = new ChangeDelivery({ changes: new Bus<CatalogChange>(), currentView: () => undefined, fingerprint: () => '', logger: pino({ level: 'silent' }) });
    return new SessionTable({ delivery, callerFor: scope => ({ scope, visible: () => true }), seal, revocations: new LocalRevocations(), requests: new RequestRegistry(), max });
}

function measures(options: SessionIdOptions): Measure[] {
    const now = Date.now();
    const expiresAt = now + 86_400_000;
    const sealed = (seal: SessionSeal, count: number) => Array.from({ length: count }, () => seal.seal({ ...FIELDS, createdAt: now, expiresAt }).id);
    const ringOfOne = new SessionSeal(SECRETS.slice(0, 1), '');
    const ringOfThree = new SessionSeal(SECRETS, '');
    const byOldest = sealed(new SessionSeal(SECRETS.slice(2), ''), options.held);
    const byOnly = sealed(ringOfOne, options.held);

    const uuids = Array.from({ length: options.held }, () => randomUUID());
    const oldDesign = new Map(uuids.map(uuid => [uuid, { id: uuid, lastSeen: now }]));

    const holding = table(ringOfThree, options.held + options.iterations);
    const heldIds = Array.from({ length: options.held }, () => holding.create({ ...FIELDS, createdAt: now, expiresAt }).id);
    // Sealed by another replica with the same ring: each resolve below brings its session in.
    const elsewhere = sealed(ringOfThree, options.iterations);
    const bringing = table(ringOfThree, options.iterations);
    const check = (found: unknown) => {
        if (found === undefined || typeof found === 'string') throw new Error(`session id did not resolve: ${String(found)}`);
    };
    return [
        { measure: MAP_LOOKUP, op: i => check(oldDesign.get(uuids[i % options.held]!)) },
        { measure: 'SessionSeal.open, ring of 1 key', op: i => check(ringOfOne.open(byOnly[i % options.held]!, now)) },
        { measure: 'SessionSeal.open, ring of 3 keys, sealed by the oldest', op: i => check(ringOfThree.open(byOldest[i % options.held]!, now)) },
        { measure: 'SessionTable.resolve, session held here', op: i => check(holding.resolve(heldIds[i % options.held]!, CLIENT, now)) },
        {
            measure: 'SessionTable.resolve, session brought in (first request here)',
            before: () => elsewhere.forEach(id => bringing.close(id)),
            op: i => check(bringing.resolve(elsewhere[i]!, CLIENT, now))
        }
    ];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function timeRound({ before, op }: Measure, iterations: number): number {
    before?.();
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) op(i);
    return Number(process.hrtime.bigint() - start) / iterations;
}

export function measureSessionId(options: SessionIdOptions): SessionIdResult {
    const all = measures(options);
    for (const measure of all) timeRound(measure, options.iterations); // warm-up
    const rounds = all.map((): number[] => []);
    for (let round = 0; round < options.rounds; round++) all.forEach((measure, k) => rounds[k]!.push(timeRound(measure, options.iterations)));
    return { ...options, rows: all.map((measure, k) => ({ measure: measure.measure, nsPerOp: median(rounds[k]!) })) };
}
