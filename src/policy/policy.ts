/**
 * Everything the policy layer decides, built from one config: who a request's
 * credentials prove (authenticator), what each client may see (access), and the
 * limits requests are held to. Rebuilt whole on reload and swapped in at once.
 */
import type { GatewayConfig } from '../config/schema.js';
import { PromptAccess } from './access.js';
import { createAuthenticator, type Authenticator } from './authenticator.js';
import { ClientDirectory } from './clients.js';
import { resourceServerSettings, type ResourceServerSettings } from './resource-server.js';

export interface ArgumentLimits {
    maxArguments: number;
    maxArgumentBytes: number;
}

export interface GatewayPolicy {
    readonly authenticator: Authenticator;
    /** jwt mode: the OAuth resource-server settings (audience, scopes, metadata); the HTTP endpoint binds them. */
    readonly resourceServer: ResourceServerSettings | undefined;
    readonly clients: ClientDirectory;
    readonly access: PromptAccess;
    readonly arguments: ArgumentLimits;
    readonly maxResultBytes: number;
}

export function compilePolicy(config: GatewayConfig): GatewayPolicy {
    const clients = new ClientDirectory(config);
    return {
        authenticator: createAuthenticator(config.auth, clients),
        resourceServer: resourceServerSettings(config.auth, config.listen),
        clients,
        access: new PromptAccess(config, clients),
        arguments: { maxArguments: config.limits.maxArguments, maxArgumentBytes: config.limits.maxArgumentBytes },
        maxResultBytes: config.limits.maxResultBytes
    };
}
