/** Who may read the operator endpoints on the MCP listener, by auth mode and operator token. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { healthDetailed, operatorRoutesOnMcpListener, withheldReason } from '../../src/observability/operator-access.js';

describe('operator access on the MCP listener', () => {
    test('metrics and the dashboard: always with auth off; with auth on only behind a token', () => {
        assert.equal(operatorRoutesOnMcpListener('none', undefined), true);
        assert.equal(operatorRoutesOnMcpListener('none', 'operator-token-0123456789'), true);
        for (const mode of ['apiKey', 'jwt'] as const) {
            assert.equal(operatorRoutesOnMcpListener(mode, undefined), false, mode);
            assert.equal(operatorRoutesOnMcpListener(mode, 'operator-token-0123456789'), true, mode);
        }
    });

    test('health details: everyone with auth off; with auth on the operator token only', () => {
        assert.equal(healthDetailed('none', false), true);
        assert.equal(healthDetailed('apiKey', false), false);
        assert.equal(healthDetailed('jwt', false), false);
        assert.equal(healthDetailed('jwt', true), true);
    });

    test('the reason names the mode and both ways to turn them on', () => {
        assert.match(withheldReason('jwt'), /auth\.mode is jwt.*metrics\.bearerToken.*metrics\.listen/);
    });
});
