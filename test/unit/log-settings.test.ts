/** LOG_LEVEL and LOG_FORMAT as every command reads them (the gateway, `prompts list/get`). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logSettingsFrom } from '../../src/diagnostics/logger.js';

const FALLBACK = { level: 'error', format: 'auto' } as const;

test('unset, the fallback; set, the variables win', () => {
    assert.deepEqual(logSettingsFrom({}, FALLBACK), { ok: true, level: 'error', format: 'auto' });
    assert.deepEqual(logSettingsFrom({ LOG_LEVEL: 'debug', LOG_FORMAT: 'json' }, FALLBACK), { ok: true, level: 'debug', format: 'json' });
});

test('a value outside the list is refused, naming the variable and its values', () => {
    assert.deepEqual(logSettingsFrom({ LOG_LEVEL: 'loud' }, FALLBACK), { ok: false, message: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent' });
    assert.deepEqual(logSettingsFrom({ LOG_FORMAT: 'xml' }, FALLBACK), { ok: false, message: 'LOG_FORMAT must be one of auto, json, pretty' });
    // Object.prototype's names are not levels.
    assert.equal(logSettingsFrom({ LOG_LEVEL: 'constructor' }, FALLBACK).ok, false);
});
