/**
 * Where the gateway's CPU goes: a V8 CPU profile of its main thread (over the inspector) while `concurrency`
 * sessions send prompts/get back to back, each sample charged to the nearest package on its stack
 * (lib/cpu-profile.ts), per request. Run after the timed scenarios: the profiler slows what it watches.
 */
import { chargeToPackages } from '../lib/cpu-profile.js';
import { Inspector } from '../lib/inspector.js';
import type { Target } from '../targets.js';
import { slice } from './throughput.js';

export interface ProfileRow {
    owner: string;
    /** Microseconds of main-thread CPU per prompts/get. */
    usPerGet: number;
}

export async function profileTarget(target: Target, inspectorUrl: string, options: { concurrency: number; durationMs: number }): Promise<ProfileRow[]> {
    const channels = await Promise.all(Array.from({ length: options.concurrency }, () => target.open()));
    const inspector = await Inspector.attach(inspectorUrl);
    try {
        await slice(target, channels, options.durationMs / 4); // warm-up
        const { value: run, profile } = await inspector.profile(() => slice(target, channels, options.durationMs));
        return [...chargeToPackages(profile)].map(([owner, micros]) => ({ owner, usPerGet: micros / run.requests })).sort((a, b) => b.usPerGet - a.usPerGet);
    } finally {
        inspector.close();
        await Promise.all(channels.map(channel => channel.close()));
    }
}
