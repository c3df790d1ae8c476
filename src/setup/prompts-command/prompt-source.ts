/**
 * The gateway's own prompt parts, run in this process without an endpoint: the same upstreams, merged catalog,
 * overrides, argument checks and get path as when serving, for one caller. A running gateway asked with `--url` is
 * one more upstream of this kind: the gateway's own client (bounded, with its timeouts) reads it.
 */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/client';
import type { Caller } from '../../catalog/service.js';
import type { InputRequired } from '../../catalog/upstream-port.js';
import { literalText } from '../../config/interpolate.js';
import { parseConfig } from '../../config/load.js';
import type { GatewayConfig } from '../../config/schema.js';
import type { Logger } from '../../diagnostics/logger.js';
import { connectUpstreams, promptParts, type PromptParts } from '../../gateway.js';
import { liveSettings } from '../../lifecycle/reload.js';
import { closeSharedReaper } from '../../upstream/reaper.js';
import type { GatewayUpstream } from '../../upstream/upstream.js';

/** The scope cursors are bound to in this process: there is one caller. */
const COMMAND_LINE_SCOPE = 'command-line';

/** The id of the one upstream that stands for a gateway asked with `--url` (in messages: "Upstream gateway failed: ..."). */
const GATEWAY_UPSTREAM_ID = 'gateway';

export class PromptSource {
    readonly #config: GatewayConfig;
    readonly #parts: PromptParts;
    readonly #caller: Caller;
    #closing: Promise<void> | undefined;

    /** `client`: answer as this configured client; without one, every prompt the config serves (the operator's view). */
    constructor(config: GatewayConfig, logger: Logger, client?: string) {
        const live = liveSettings(config);
        this.#config = config;
        this.#parts = promptParts(live, logger);
        this.#caller = { scope: COMMAND_LINE_SCOPE, visible: client === undefined ? live.policy.access.served() : live.policy.access.visibility(client) };
    }

    /** Every upstream's first attempt, each bounded by its own timeouts, as at the gateway's start. */
    connect(): Promise<void> {
        return connectUpstreams(this.#config, this.#parts);
    }

    get upstreams(): readonly GatewayUpstream[] {
        return this.#parts.pool.connections;
    }

    /** The merged list, every page. */
    async list(): Promise<Prompt[]> {
        const prompts: Prompt[] = [];
        let cursor: string | undefined;
        do {
            const page = await this.#parts.service.list(cursor, this.#caller);
            prompts.push(...page.prompts);
            cursor = page.nextCursor;
        } while (cursor !== undefined);
        return prompts;
    }

    get(name: string, args: Record<string, string>): Promise<GetPromptResult | InputRequired> {
        return this.#parts.service.get({ name, args, caller: this.#caller });
    }

    /** Stops every upstream (stdio children and their process groups included); safe to call more than once. */
    close(): Promise<void> {
        this.#closing ??= (async () => {
            this.#parts.catalog.close();
            await this.#parts.pool.close();
            // Every child is stopped by now; this ends the watchdog that would have stopped them had we died.
            await closeSharedReaper();
        })();
        return this.#closing;
    }
}

/**
 * A config whose one upstream is the gateway at `url`, its names as they are (no namespace), its arguments its own
 * to check. The key goes in a header, which the config's redaction covers like any upstream header.
 */
export function gatewayConfig(url: string, apiKey: string | undefined, env: NodeJS.ProcessEnv): GatewayConfig {
    const upstream = {
        id: GATEWAY_UPSTREAM_ID,
        transport: 'streamable-http',
        url: literalText(url),
        namespace: false,
        passUnknownArguments: true,
        required: true,
        pingIntervalMs: 0,
        ...(apiKey === undefined ? {} : { headers: { authorization: literalText(`Bearer ${apiKey}`) } })
    };
    return parseConfig(JSON.stringify({ upstreams: [upstream] }), '--url', env);
}
