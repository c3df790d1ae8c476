/**
 * Claude Code's `.mcp.json` (and the `mcpServers` of `~/.claude.json`): `type` stdio, http (Streamable HTTP) or
 * sse, and `${VAR}` / `${VAR:-default}` from the environment in command, args, env, url and headers.
 */
import type { ClientFormat } from './format.js';
import { fromEnvironment, type Resolution, type VariableScope } from './variables.js';

const VARIABLE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/** As the gateway's own config reads them; an unset variable without a default is an error, not left as written. */
export function claudeCodeVariable(inside: string, scope: VariableScope): Resolution {
    const match = VARIABLE.exec(inside);
    if (match === null) return undefined;
    const [, name = '', fallback] = match;
    const value = Object.hasOwn(scope.env, name) ? scope.env[name] : undefined;
    if (value !== undefined && !(value === '' && fallback !== undefined)) return fromEnvironment(name, value);
    if (fallback !== undefined) return { value: fallback };
    return { problem: `environment variable ${name} is not set; set it, or give a default with \${${name}:-default}` };
}

export const claudeCode: ClientFormat = {
    name: 'claude-code',
    serversKey: 'mcpServers',
    httpTransport: 'streamable-http',
    variables: () => claudeCodeVariable
};
