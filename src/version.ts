/** The package version, read once from package.json (one level above both src/ and dist/). */
import { createRequire } from 'node:module';

const manifest = createRequire(import.meta.url)('../package.json') as { version: string };

export const VERSION: string = manifest.version;

/** How the gateway introduces itself, to clients and to upstream servers alike. */
export const GATEWAY_INFO = { name: 'mcp-prompt-gateway', version: VERSION } as const;
