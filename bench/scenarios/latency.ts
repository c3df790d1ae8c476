/**
 * Latency at concurrency 1: one prompts/get at a time, the targets interleaved request by request (each round
 * visits every target once, starting at another each round), so drift on a noisy machine hits all alike. What a
 * hop adds is its p50 minus direct's p50.
 */
import { percentiles, rotated, timedUs, type Percentiles } from '../lib/stats.js';
import type { Target } from '../targets.js';

export interface LatencyRow {
    name: string;
    /** Microseconds. */
    latency: Percentiles;
}

export async function measureLatency(targets: Target[], rounds: number): Promise<LatencyRow[]> {
    const channels = await Promise.all(targets.map(target => target.open()));
    try {
        const samples = targets.map(() => [] as number[]);
        const indices = targets.map((_, i) => i);
        const warmUp = Math.max(20, Math.floor(rounds / 5));
        for (let round = 0; round < warmUp + rounds; round++) {
            for (const i of rotated(indices, round)) {
                const micros = await timedUs(() => targets[i]!.get(channels[i]!));
                if (round >= warmUp) samples[i]!.push(micros);
            }
        }
        return targets.map((target, i) => ({ name: target.name, latency: percentiles(samples[i]!) }));
    } finally {
        await Promise.all(channels.map(channel => channel.close()));
    }
}
