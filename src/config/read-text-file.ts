/** Reading a file a config names (the config itself, a client config file, an env file, a JWKS file). */
import { readFile } from 'node:fs/promises';
import { ConfigError, type ConfigIssue } from './issues.js';

/** The config error a file that cannot be read becomes: the config and field that name it, and what to do. */
export interface FileField {
    source: string;
    path: ConfigIssue['path'];
    fix: string;
}

/** The text of `file`; if it cannot be read, a ConfigError on `field` that says why ("file not found (FILE)", ...) and the fix. */
export async function readTextFile(file: string, field: FileField): Promise<string> {
    try {
        return await readFile(file, 'utf8');
    } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? `file not found (${file})` : code === 'EISDIR' ? `is a folder (${file})` : `cannot be read (${code ?? 'error'}: ${file})`;
        throw new ConfigError(field.source, [{ path: field.path, message: `${why}; ${field.fix}` }]);
    }
}
