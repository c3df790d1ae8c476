/** Files shipped in this package, by their real path wherever it is installed (a global install links to it). */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `relative` to the package root: this module is src/setup/*.ts, or dist/setup/*.js once built. */
function shipped(relative: string): string {
    return realpathSync(fileURLToPath(new URL(`../../${relative}`, import.meta.url)));
}

export function packageFiles(): { schema: string; exampleServer: string; formatExamples: string } {
    return {
        schema: shipped('config/gateway.schema.json'),
        exampleServer: shipped('examples/prompt-server.mjs'),
        formatExamples: shipped('examples/formats')
    };
}
