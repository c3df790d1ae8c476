/**
 * What a call ended from inside an interaction fails with (issue 28): the handler's own error, passed through the
 * upstream layer unchanged, and never taken as evidence that the upstream is gone or silent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InputRefusedError, UpstreamFailedError, UpstreamRejectedError } from '../../src/catalog/upstream-port.js';
import { missingCapabilityError } from '../../src/protocol/errors.js';
import { connectionEvidence, toUpstreamError } from '../../src/upstream/errors.js';

test('a refusal carries -32021 and its data to the client; it and a failure of the interaction pass the upstream layer as they are', () => {
    const refusal = new InputRefusedError(missingCapabilityError({ capability: 'elicitation', feature: 'url' }));
    assert.ok(refusal instanceof UpstreamRejectedError);
    assert.deepEqual(
        [refusal.code, refusal.message, refusal.data],
        [-32021, 'The upstream asks for elicitation (url mode), which this client did not declare', { requiredCapabilities: { elicitation: { url: {} } } }]
    );
    const rounds = new UpstreamFailedError('up', 'more than inputRequests.maxRounds rounds of input', 'input_rounds');
    for (const error of [refusal, rounds]) {
        assert.equal(toUpstreamError('up', error, 10_000), error);
        assert.equal(connectionEvidence(error), 'failed', 'says nothing of the connection: liveness untouched');
    }
});
