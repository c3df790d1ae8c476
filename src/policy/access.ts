/**
 * Which prompts a client may see and use: the upstream's policy (on its own
 * prompt names), then the global policy and the client's policy (on exposed
 * names). One predicate serves prompts/list, prompts/get, completion/complete
 * and the fingerprint that decides list_changed, so they cannot disagree.
 */
import type { CatalogEntry, Visibility } from '../catalog/catalog.js';
import type { GatewayConfig } from '../config/schema.js';
import type { ClientDirectory } from './clients.js';
import { compilePromptFilter, type NameFilter } from './prompt-filter.js';

const NOTHING: Visibility = () => false;

export class PromptAccess {
    readonly #global: NameFilter;
    readonly #upstreams = new Map<string, { prompts: NameFilter; passUnknownArguments: boolean }>();
    readonly #byClient = new Map<string, Visibility>();

    constructor(
        config: Pick<GatewayConfig, 'prompts' | 'upstreams'>,
        private readonly clients: ClientDirectory
    ) {
        this.#global = compilePromptFilter(config.prompts);
        for (const upstream of config.upstreams) {
            this.#upstreams.set(upstream.id, {
                prompts: compilePromptFilter(upstream.prompts),
                passUnknownArguments: upstream.passUnknownArguments
            });
        }
    }

    /** What `clientId` may see; nothing for a client (or of an upstream) no longer configured. */
    visibility(clientId: string): Visibility {
        let visible = this.#byClient.get(clientId);
        if (visible === undefined) {
            visible = this.#build(clientId);
            this.#byClient.set(clientId, visible);
        }
        return visible;
    }

    passesUnknownArguments(upstreamId: string): boolean {
        return this.#upstreams.get(upstreamId)?.passUnknownArguments ?? false;
    }

    /**
     * What the gateway serves at all, before any client's own policy: the upstreams' and the global policy. The
     * operator's view (`prompts list` on the command line), and the part every client's view starts from.
     */
    served(): Visibility {
        const global = this.#global;
        const upstreams = this.#upstreams;
        return (entry: CatalogEntry) => (upstreams.get(entry.upstream.id)?.prompts(entry.originalName) ?? false) && global(entry.exposedName);
    }

    #build(clientId: string): Visibility {
        const client = this.clients.get(clientId);
        if (client === undefined) return NOTHING;
        const served = this.served();
        const own = client.prompts;
        return (entry: CatalogEntry) => served(entry) && own(entry.exposedName);
    }
}
