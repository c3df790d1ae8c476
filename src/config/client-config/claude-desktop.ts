/** Claude Desktop's `claude_desktop_config.json`: `mcpServers` of command, args and env, with no placeholders. */
import type { ClientFormat } from './format.js';

export const claudeDesktop: ClientFormat = {
    name: 'claude-desktop',
    serversKey: 'mcpServers',
    httpTransport: 'streamable-http',
    // Claude Desktop passes "${...}" on as written, and so does the gateway for this format.
    variables: () => undefined
};
