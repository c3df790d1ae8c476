/** withoutExceptionText: the SDK transport's catch-all answer (exception text in `data`) never reaches a client. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { withoutExceptionText } from '../../src/downstream/session-transport.js';

function errorAnswer(status: number, error: Record<string, unknown>): Response {
    return Response.json({ jsonrpc: '2.0', error, id: null }, { status, headers: { 'content-type': 'application/json' } });
}

describe('withoutExceptionText', () => {
    test('the catch-all "Parse error" with the exception in data becomes HTTP 500 -32603 "Internal error"; the text goes to onHidden', async () => {
        const hidden: unknown[] = [];
        const answer = await withoutExceptionText(
            errorAnswer(400, { code: -32700, message: 'Parse error', data: 'RangeError: Maximum call stack size exceeded' }),
            data => hidden.push(data)
        );
        assert.equal(answer.status, 500);
        const text = await answer.text();
        assert.deepEqual(JSON.parse(text), { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
        assert.doesNotMatch(text, /RangeError|stack/);
        assert.deepEqual(hidden, ['RangeError: Maximum call stack size exceeded']);
    });

    test('error answers without data, successes and streams pass unchanged', async () => {
        const hidden: unknown[] = [];
        const onHidden = (data: unknown) => hidden.push(data);
        const refused = errorAnswer(406, { code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' });
        assert.equal(await withoutExceptionText(refused, onHidden), refused);
        const accepted = new Response(null, { status: 202 });
        assert.equal(await withoutExceptionText(accepted, onHidden), accepted);
        const stream = new Response('event: message\ndata: {}\n\n', { status: 200, headers: { 'content-type': 'text/event-stream' } });
        assert.equal(await withoutExceptionText(stream, onHidden), stream);
        const notJson = new Response('<html>', { status: 500, headers: { 'content-type': 'application/json' } });
        assert.equal(await withoutExceptionText(notJson, onHidden), notJson);
        assert.deepEqual(hidden, []);
        // The body of a passed answer is still readable (only a clone was read).
        assert.match(await refused.text(), /Not Acceptable/);
    });
});
