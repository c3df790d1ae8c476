/** Quota keys: configured clients by id, the anonymous caller by address (IPv6 by /64), and which proxies are believed. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { clientAddress, compileProxyTrust } from '../../src/lib/client-address.js';
import { ClientDirectory } from '../../src/policy/clients.js';
import { addressKey, quotaKey } from '../../src/policy/quota.js';

const directory = new ClientDirectory(
    parseConfig(JSON.stringify({ clients: [{ id: 'alice', apiKey: 'alice-key-0123456789abcdef' }], upstreams: [{ id: 'u', transport: 'stdio', command: 'x' }] }), 'test', {})
);

describe('addressKey', () => {
    test('IPv4 as it is; IPv4-mapped IPv6 as its IPv4', () => {
        assert.equal(addressKey('127.0.0.2'), '127.0.0.2');
        assert.equal(addressKey('::ffff:127.0.0.2'), '127.0.0.2');
        assert.equal(addressKey('::FFFF:7f00:2'), '127.0.0.2');
    });

    test('IPv4 written another way is keyed as its dotted-quad form', () => {
        assert.equal(addressKey('0x7f.0.0.2'), '127.0.0.2');
        assert.equal(addressKey('010.0.0.1'), '8.0.0.1');
        assert.equal(addressKey('1.2.3.04'), '1.2.3.4');
        assert.equal(addressKey('255.255.255.255'), '255.255.255.255');
        assert.equal(addressKey('256.1.1.1'), '256.1.1.1');
    });

    test('IPv6 by its /64 prefix, however it is written', () => {
        const key = addressKey('2001:db8:1:2:3:4:5:6');
        assert.equal(addressKey('2001:0db8:0001:0002:ffff::1'), key);
        assert.equal(addressKey('2001:DB8:1:2::'), key);
        assert.notEqual(addressKey('2001:db8:1:3::1'), key);
        assert.notEqual(addressKey('::1'), key);
    });

    test('something that is not an address is a key of its own, bounded in length', () => {
        assert.equal(addressKey('unknown'), 'unknown');
        assert.ok(addressKey('x'.repeat(10_000)).length <= 64);
    });
});

describe('quotaKey', () => {
    test('a configured client is its id, wherever it calls from', () => {
        const alice = directory.get('alice')!;
        assert.equal(quotaKey(alice, '127.0.0.2'), 'alice');
        assert.equal(quotaKey(alice, '127.0.0.3'), 'alice');
    });

    test('the anonymous client is one key per address', () => {
        assert.equal(quotaKey(directory.anonymous, '127.0.0.2'), 'anonymous@127.0.0.2');
        assert.notEqual(quotaKey(directory.anonymous, '127.0.0.3'), quotaKey(directory.anonymous, '127.0.0.2'));
        assert.equal(quotaKey(directory.anonymous, undefined), 'anonymous@unknown');
    });
});

describe('clientAddress', () => {
    const request = (remoteAddress: string, forwardedFor?: string) => ({
        socket: { remoteAddress },
        headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }
    });

    test('trusting no proxy (the default), X-Forwarded-For is ignored', () => {
        const trust = compileProxyTrust(undefined);
        assert.equal(clientAddress(request('127.0.0.2', '203.0.113.7'), trust), '127.0.0.2');
        assert.equal(clientAddress(request('127.0.0.2'), compileProxyTrust([])), '127.0.0.2');
    });

    test('behind a trusted proxy, the address it saw; addresses a client wrote in front of it are not believed', () => {
        const trust = compileProxyTrust(['10.0.0.0/8']);
        assert.equal(clientAddress(request('10.1.2.3', '203.0.113.7'), trust), '203.0.113.7');
        assert.equal(clientAddress(request('10.1.2.3', '198.51.100.1, 203.0.113.7'), trust), '203.0.113.7');
        // A chain of trusted proxies is walked to the first address none of them is.
        assert.equal(clientAddress(request('10.1.2.3', '203.0.113.7, 10.9.9.9'), trust), '203.0.113.7');
        // A socket that is not a trusted proxy: its own address.
        assert.equal(clientAddress(request('192.0.2.1', '203.0.113.7'), trust), '192.0.2.1');
    });

    test('names: loopback, linklocal, uniquelocal', () => {
        const trust = compileProxyTrust(['loopback']);
        assert.equal(clientAddress(request('127.0.0.1', '203.0.113.7'), trust), '203.0.113.7');
        assert.equal(clientAddress(request('::1', '2001:db8::1'), trust), '2001:db8::1');
    });

    test('a value that is not an address, range or name is an error naming it, in the config too', () => {
        assert.throws(() => compileProxyTrust(['10.0.0.0/8', 'proxy.example']), /proxy\.example/);
        const config = { listen: { trustProxy: ['10.0.0.0/8', 'proxy.example'] }, upstreams: [{ id: 'u', transport: 'stdio', command: 'x' }] };
        assert.throws(() => parseConfig(JSON.stringify(config), 'test', {}), /listen\.trustProxy\[1\]: "proxy\.example" is not an IP address/);
        assert.doesNotThrow(() => parseConfig(JSON.stringify({ ...config, listen: { trustProxy: ['loopback', '10.0.0.0/8', '2001:db8::/32'] } }), 'test', {}));
    });
});
