/** Assertions shared by the config tests. */
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/issues.js';

/** Runs `parse` and returns its ConfigError, failing the test when the config is accepted or something else is thrown. */
export function configError(parse: () => unknown): ConfigError {
    try {
        parse();
    } catch (error) {
        assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
        return error;
    }
    assert.fail('config was accepted');
}

/** The message line for `path`, e.g. "  - upstreams[0].id: must be ...". */
export function lineFor(error: ConfigError, path: string): string {
    const line = error.message.split('\n').find(candidate => candidate.startsWith(`  - ${path}: `));
    assert.ok(line !== undefined, `no issue at ${path} in:\n${error.message}`);
    return line;
}

/** The ConfigError a load fails with (the test fails if it succeeds or throws anything else). */
export async function configFailure(load: Promise<unknown>): Promise<ConfigError> {
    const outcome = await load.then(
        () => ({ failed: false as const }),
        (error: unknown) => ({ failed: true as const, error })
    );
    return configError(() => {
        if (outcome.failed) throw outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
    });
}
