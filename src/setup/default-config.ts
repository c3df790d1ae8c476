/** Without --config, the gateway uses ./gateway.json, as `init` writes it; without one, it says what to do. */
import { existsSync } from 'node:fs';
import path from 'node:path';

export const DEFAULT_CONFIG_NAME = 'gateway.json';

/** The config to use when none was named, or undefined after `report` has said what to do. */
export function defaultConfigFile(cwd: string, report: (text: string) => void): string | undefined {
    const file = path.join(cwd, DEFAULT_CONFIG_NAME);
    if (existsSync(file)) {
        report(`no --config given: using ${file}\n`);
        return file;
    }
    report(
        `mcp-prompt-gateway: no --config given and no ${DEFAULT_CONFIG_NAME} in ${cwd}.\n` +
            `Run \`mcp-prompt-gateway init\` to write a starter ${DEFAULT_CONFIG_NAME} here, or pass --config FILE,\n` +
            'or --from FILE to serve the MCP servers of your Claude Desktop, Cursor or VS Code config.\n'
    );
    return undefined;
}
