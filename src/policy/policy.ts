/**
 * Everything the policy layer decides, built from one config: who a request's
 * credentials prove (authenticator), what each client may see (access), and the
 * limits requests are held to. Rebuilt whole on reload and swapped in at once.
 */
import type { GatewayConfig } from '../config/schema.js';
import { PromptAccess } from './access.js';
import { createAuthenticator, type Authenticator } from './authenticator.js';
import { ClientDirectory } from './clients.js';

export interface ArgumentLimits {
    maxArguments: number;
    maxArgumentBytes: number;
}

export interface GatewayPolicy {
    readonly authenticator: Authenticator;
    readonly clients: ClientDirectory;
    readonly access: PromptAccess;
    readonly arguments: ArgumentLimits;
    readonly maxResultBytes: number;
}

export function compilePolicy(config: GatewayConfig): GatewayPolicy {
    const clients = new ClientDirectory(config);
    return {
        authenticator: createAuthenticator(config.auth, clients),
        clients,
        access: new PromptAccess(config, clients),
        arguments: { maxArguments: config.limits.maxArguments, maxArgumentBytes: config.limits.maxArgumentBytes },
        maxResultBytes: config.limits.maxResultBytes
    };
}
