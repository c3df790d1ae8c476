/**
 * browserGuards' Host and Origin decisions, request by request (the HTTP-level checks are in
 * test/browser-safety.test.ts): a page's own origin (the prompt catalog calling the endpoint that served it) passes
 * once its Host passed the Host check, and never when Host checks are off.
 */
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { browserGuards, type BrowserSafety } from '../../src/http-server/browser-safety.js';

function request(headers: Record<string, string>): { req: IncomingMessage; res: ServerResponse } {
    const req = new IncomingMessage(new Socket());
    req.method = 'POST';
    req.headers = headers;
    return { req, res: new ServerResponse(req) };
}

function decide(safety: Partial<BrowserSafety>, headers: Record<string, string>) {
    const guard = browserGuards({ allowedHosts: undefined, allowedOrigins: undefined, cors: undefined, ...safety });
    const { req, res } = request(headers);
    return guard(req, res);
}

const LISTED = { allowedHosts: ['gateway.internal'], allowedOrigins: ['tool.internal'] };

describe('browserGuards: same-origin requests', () => {
    test('an Origin naming the Host passes when the Host check passed, though allowedOrigins does not list it', () => {
        assert.equal(decide(LISTED, { host: 'gateway.internal:8443', origin: 'https://gateway.internal:8443' }), undefined);
        assert.equal(decide(LISTED, { host: 'GATEWAY.internal:8443', origin: 'http://gateway.INTERNAL:8443' }), undefined, 'in any case');
        // A default port written out in Host is the same origin as one left out in Origin.
        assert.equal(decide(LISTED, { host: 'gateway.internal:443', origin: 'https://gateway.internal' }), undefined);
        assert.equal(decide(LISTED, { host: 'gateway.internal', origin: 'http://gateway.internal' }), undefined);
    });

    test('another port, another host or a non-web Origin of the same host is still refused', () => {
        for (const origin of [
            'https://gateway.internal:9000',
            'https://gateway.internal',
            'https://gateway.internal.evil.example:8443',
            'null',
            'file://gateway.internal:8443',
            'not a url'
        ]) {
            assert.equal(decide(LISTED, { host: 'gateway.internal:8443', origin }), 'forbidden_origin', origin);
        }
        assert.equal(decide(LISTED, { host: 'gateway.internal:8443', origin: 'http://tool.internal' }), undefined, 'the listed origins still pass');
    });

    test('a Host the check refuses is refused first, whatever its Origin (DNS rebinding)', () => {
        assert.equal(decide(LISTED, { host: 'evil.example', origin: 'http://evil.example' }), 'forbidden_host');
    });

    test('with Host checks off, a same-origin Origin is not enough: only the configured origins pass', () => {
        const unchecked = { allowedHosts: undefined, allowedOrigins: ['tool.internal'] };
        assert.equal(decide(unchecked, { host: 'evil.example', origin: 'http://evil.example' }), 'forbidden_origin');
        assert.equal(decide(unchecked, { host: 'gateway.internal', origin: 'http://gateway.internal' }), 'forbidden_origin');
        assert.equal(decide(unchecked, { host: 'evil.example', origin: 'http://tool.internal' }), undefined);
    });

    test('the loopback defaults are unchanged: the same page on 127.0.0.1 passes, a request without Origin passes', () => {
        const loopback = { allowedHosts: ['localhost', '127.0.0.1', '[::1]'], allowedOrigins: ['localhost', '127.0.0.1', '[::1]'] };
        assert.equal(decide(loopback, { host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' }), undefined);
        assert.equal(decide(loopback, { host: '127.0.0.1:3000' }), undefined);
        assert.equal(decide(loopback, { host: '127.0.0.1:3000', origin: 'http://evil.example' }), 'forbidden_origin');
    });
});
