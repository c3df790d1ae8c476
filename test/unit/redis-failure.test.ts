import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ReplyError } from 'ioredis';
import { classifyRedisFailure } from '../../src/cluster/redis-failure.js';

/** ioredis types ReplyError as any; it is redis-errors' class, an Error named ReplyError. */
const RedisReplyError = ReplyError as new (message: string) => Error & { previousErrors?: Error[] };

/** A reply error as ioredis raises it. */
function reply(message: string, previousErrors?: string[]): Error {
    const error = new RedisReplyError(message);
    if (previousErrors !== undefined) error.previousErrors = previousErrors.map(previous => reply(previous));
    return error;
}

describe('classifyRedisFailure', () => {
    test('Redis refusing writes, whichever way, is unhealthy, with the code as the reason', () => {
        for (const [message, code] of [
            ["OOM command not allowed when used memory > 'maxmemory'.", 'OOM'],
            ["READONLY You can't write against a read only replica.", 'READONLY'],
            ['MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.', 'MISCONF'],
            ['NOREPLICAS Not enough good replicas to write.', 'NOREPLICAS']
        ] as const) {
            assert.deepEqual(classifyRedisFailure(reply(message)), { kind: 'unhealthy', reason: `Redis refuses writes: ${code}` }, message);
        }
    });

    test("a transaction discarded for its commands' refusals, and a script stopped by one, read as that refusal", () => {
        const discarded = reply('EXECABORT Transaction discarded because of previous errors.', ["OOM command not allowed when used memory > 'maxmemory'."]);
        assert.deepEqual(classifyRedisFailure(discarded), { kind: 'unhealthy', reason: 'Redis refuses writes: OOM' });
        const script = reply("OOM command not allowed when used memory > 'maxmemory'. script: b44da0ef, on @user_script:1.");
        assert.deepEqual(classifyRedisFailure(script), { kind: 'unhealthy', reason: 'Redis refuses writes: OOM' });
    });

    test('Redis serving no commands (loading, a busy script, access denied) is unhealthy too', () => {
        for (const code of ['LOADING', 'BUSY', 'MASTERDOWN', 'NOAUTH', 'NOPERM']) {
            assert.deepEqual(classifyRedisFailure(reply(`${code} something`)), { kind: 'unhealthy', reason: `Redis refuses commands: ${code}` });
        }
    });

    test("no answer in time is unhealthy; a connection gone is for the connection's events to tell", () => {
        assert.deepEqual(classifyRedisFailure(new Error('Command timed out')), { kind: 'unhealthy', reason: 'Redis does not answer in time' });
        for (const error of [new Error("Stream isn't writeable and enableOfflineQueue options is false"), new Error('Connection is closed.'), 'not an error']) {
            assert.deepEqual(classifyRedisFailure(error), { kind: 'unreachable' });
        }
    });

    test('a command refused for itself says nothing of Redis: rejected, with its code (ERR when it has none)', () => {
        assert.deepEqual(classifyRedisFailure(reply('WRONGTYPE Operation against a key holding the wrong kind of value')), { kind: 'rejected', code: 'WRONGTYPE' });
        assert.deepEqual(classifyRedisFailure(reply('ERR syntax error')), { kind: 'rejected', code: 'ERR' });
        assert.deepEqual(classifyRedisFailure(reply('something unexpected')), { kind: 'rejected', code: 'ERR' });
        const discarded = reply('EXECABORT Transaction discarded because of previous errors.', ['WRONGTYPE Operation against a key holding the wrong kind of value']);
        assert.deepEqual(classifyRedisFailure(discarded), { kind: 'rejected', code: 'WRONGTYPE' });
    });
});
