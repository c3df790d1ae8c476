/**
 * Every server field the gateway knows from a client's config, and what it does with it: reads it, warns that it
 * is the client's own business and has no effect here, or refuses the server because it would run differently
 * from what the field asks. A field it does not know is warned about by name, never dropped silently.
 */

export type FieldRule =
    | { kind: 'read' }
    | { kind: 'client-only'; what: string }
    /** `when`: the values refused (default: any). */
    | { kind: 'refused'; what: string; fix: string; when?: (value: unknown) => boolean };

const read: FieldRule = { kind: 'read' };

const clientOnly = (what: string): FieldRule => ({ kind: 'client-only', what });

const refused = (what: string, fix: string, when?: (value: unknown) => boolean): FieldRule => ({ kind: 'refused', what, fix, ...(when === undefined ? {} : { when }) });

const STATIC_TOKEN = 'give a token in "headers" instead (e.g. "Authorization": "Bearer ${env:TOKEN}"), or leave the server out with exclude';

export const FIELD_RULES: Readonly<Record<string, FieldRule>> = {
    type: read,
    command: read,
    args: read,
    env: read,
    envFile: read,
    cwd: read,
    url: read,
    headers: read,
    disabled: read,
    // Tool approvals (Cline, Roo Code): the gateway serves prompts; its clients approve their own tools.
    autoApprove: clientOnly('tool calls the client approves without asking'),
    alwaysAllow: clientOnly('tool calls the client approves without asking'),
    timeout: clientOnly("the client's own request timeout; the gateway's timeoutMs (10 s by default) applies"),
    dev: clientOnly("VS Code's development mode (restart on file changes, debugger)"),
    gallery: clientOnly('where VS Code installed the server from'),
    version: clientOnly('the version VS Code installed'),
    sandbox: clientOnly("VS Code's sandbox rules, which apply only with sandboxEnabled"),
    sandboxEnabled: refused(
        'asks VS Code to run the server in a sandbox, which the gateway cannot do',
        'remove sandboxEnabled to run the server unsandboxed, or leave it out with exclude',
        value => value !== false
    ),
    headersHelper: refused("runs a command for Claude Code's headers at each connection", STATIC_TOKEN),
    oauth: refused("is Claude Code's OAuth sign-in, which needs a user at a browser", STATIC_TOKEN),
    auth: refused("is Cursor's OAuth sign-in, which needs a user at a browser", STATIC_TOKEN)
};

/** Fields that only one kind of server uses: present on the other kind, they have no effect. */
export const STDIO_FIELDS = ['command', 'args', 'env', 'envFile', 'cwd'] as const;
export const HTTP_FIELDS = ['url', 'headers'] as const;
