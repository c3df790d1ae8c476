/** What sets one client's config file apart from another's, as far as the gateway reads them. */
import type { VariableReader } from './variables.js';
import type { VsCodeInputs } from './vscode-inputs.js';

export const CLIENT_CONFIG_FORMATS = ['auto', 'claude-desktop', 'cursor', 'claude-code', 'vscode'] as const;

export type ClientConfigFormat = (typeof CLIENT_CONFIG_FORMATS)[number];

export interface ClientFormat {
    /** As the config names it, or a description for the auto-detected mcpServers reading. */
    name: string;
    /** The top-level object mapping server names to servers. */
    serversKey: 'mcpServers' | 'servers';
    /** The gateway transport `"type": "http"` means: Streamable HTTP only, or with the legacy SSE fallback. */
    httpTransport: 'streamable-http' | 'http';
    /** How the client reads `${...}` (VS Code's `${input:ID}` needs the file's inputs); undefined: it does not. */
    variables(inputs: VsCodeInputs | undefined): VariableReader | undefined;
}
