/** Real files on disk for unit tests: a temporary folder removed after the test, and files written into it. */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

export async function folder(t: TestContext, prefix: string): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), prefix));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return dir;
}

/** Writes `content` (a string as it is, anything else as JSON) to `file`, making its folders. */
export async function write(file: string, content: unknown): Promise<string> {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return file;
}
