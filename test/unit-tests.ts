/**
 * Every unit test file in one process: `npm run test:unit` runs this file, not test/unit/*.test.ts one process each.
 * The unit tests are pure logic and small I/O, and a test process costs ~1.5 s of CPU before its first test (tsx
 * compiling and resolving the SDK's modules): 78 processes spent more CPU starting than testing, on CI's 2 cores.
 * Their tests run one after the other here; none relies on the process being its own (timers are mocked per test).
 *
 *   UNIT_TEST_FILES="test/unit/a.test.ts test/unit/b.test.ts" node --import tsx --test test/unit-tests.ts   # a subset
 *   node --import tsx --test test/unit/a.test.ts                                                            # one file
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const UNIT = path.join(ROOT, 'test/unit');

function unitTestFiles(): string[] {
    const chosen = process.env['UNIT_TEST_FILES']?.split(/\s+/).filter(file => file !== '');
    if (chosen !== undefined && chosen.length > 0) return chosen.map(file => path.resolve(ROOT, file));
    return readdirSync(UNIT)
        .filter(name => name.endsWith('.test.ts'))
        .sort()
        .map(name => path.join(UNIT, name));
}

/**
 * Every module of src/ but the CLI (which runs on import), evaluated before the first test is registered. A test may
 * start while later files still load, and a module that captures a global when it is evaluated (smol-toml's TomlDate
 * extends Date) would capture a test's mocked Date or timers for good: that failed "date.isValid is not a function"
 * in one full run of three.
 */
function sourceModules(folder: string): string[] {
    return readdirSync(folder, { withFileTypes: true }).flatMap(entry => {
        const full = path.join(folder, entry.name);
        if (entry.isDirectory()) return sourceModules(full);
        return entry.name.endsWith('.ts') && full !== path.join(ROOT, 'src/cli.ts') ? [full] : [];
    });
}
await Promise.all(sourceModules(path.join(ROOT, 'src')).map(file => import(pathToFileURL(file).href)));

// In order, each file's tests registered before the next file loads (the reporter names each test's file).
for (const file of unitTestFiles()) await import(pathToFileURL(file).href);
