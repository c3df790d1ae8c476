/** `prompts list|get` on the command line, its pure parts: the command line read, and prompts and messages as text. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { API_KEY_VARIABLE, parsePromptsCommand, promptArguments, PromptsUsageError } from '../../src/setup/prompts-command/command-line.js';
import { contentText, messagesText, promptLines, terminalSafe } from '../../src/setup/prompts-command/render.js';

const NO_ENV = {};

function usageError(argv: string[], message: RegExp, env: Record<string, string> = {}): void {
    assert.throws(
        () => parsePromptsCommand(argv, env),
        (error: unknown) => error instanceof PromptsUsageError && message.test(error.message),
        argv.join(' ')
    );
}

describe('prompts command line', () => {
    test('list from the default config, in this process', () => {
        assert.deepEqual(parsePromptsCommand(['list'], NO_ENV), {
            action: 'list',
            json: false,
            origin: { kind: 'config', config: undefined, from: [], client: undefined }
        });
    });

    test('get with arguments, --json, --config and --client in any order', () => {
        const command = parsePromptsCommand(['get', '--json', 'team__review', 'diff=a=b c', '--config', 'g.json', 'lang=', '--client', 'ci'], NO_ENV);
        assert.deepEqual(command, {
            action: 'get',
            name: 'team__review',
            arguments: { diff: 'a=b c', lang: '' },
            json: true,
            origin: { kind: 'config', config: 'g.json', from: [], client: 'ci' }
        });
    });

    test('a name that starts with "-" comes after "--"', () => {
        const command = parsePromptsCommand(['get', '--', '-odd', 'x=1'], NO_ENV);
        assert.equal(command.action, 'get');
        assert.equal(command.action === 'get' && command.name, '-odd');
    });

    test('--url takes its key from --api-key, else from the environment variable', () => {
        const url = 'http://127.0.0.1:8080/mcp';
        assert.deepEqual(parsePromptsCommand(['list', '--url', url, '--api-key', 'from-flag'], { [API_KEY_VARIABLE]: 'from-env' }), {
            action: 'list',
            json: false,
            origin: { kind: 'gateway', url, apiKey: 'from-flag' }
        });
        const fromEnv = parsePromptsCommand(['list', '--url', url], { [API_KEY_VARIABLE]: 'from-env' });
        assert.deepEqual(fromEnv.action === 'list' && fromEnv.origin, { kind: 'gateway', url, apiKey: 'from-env' });
        const none = parsePromptsCommand(['list', '--url', url], { [API_KEY_VARIABLE]: '' });
        assert.deepEqual(none.action === 'list' && none.origin, { kind: 'gateway', url, apiKey: undefined });
    });

    test('--help wins over everything else', () => {
        assert.deepEqual(parsePromptsCommand(['get', '--help'], NO_ENV), { action: 'help' });
        assert.deepEqual(parsePromptsCommand(['-h'], NO_ENV), { action: 'help' });
    });

    const refused: [string[], RegExp][] = [
        [[], /say what to do: list or get/],
        [['show'], /unknown action "show"; use list or get/],
        [['list', 'extra'], /list takes no arguments; got "extra"/],
        [['get'], /get needs the name of a prompt/],
        [['get', 'p', 'novalue'], /"novalue" is not <arg>=<value>/],
        [['get', 'p', '=value'], /"=value" is not <arg>=<value>/],
        [['get', 'p', 'a=1', 'a=2'], /argument "a" is given twice/],
        [['list', '--port', '1'], /Unknown option '--port'/],
        [['list', '--api-key', 'k'], /--api-key goes with --url/],
        [['list', '--url', 'ftp://host/mcp'], /--url must be the http:\/\/ or https:\/\/ URL/],
        [['list', '--url', 'not a url'], /--url must be the http:\/\/ or https:\/\/ URL/],
        [['list', '--url', 'http://h/mcp', '--config', 'g.json'], /--config is for the config in this process/],
        [['list', '--url', 'http://h/mcp', '--from', 'c.json'], /--from is for the config in this process/],
        [['list', '--url', 'http://h/mcp', '--client', 'ci'], /--client is for the config in this process/],
        [['list', '--url', 'http://h/mcp', '--api-key', ''], /--api-key must not be empty/],
        [['list', '--client', ''], /--client must not be empty/]
    ];
    for (const [argv, message] of refused) {
        test(`refuses: prompts ${argv.join(' ')}`, () => usageError(argv, message));
    }
});

describe('prompt arguments', () => {
    test('split at the first "=", names kept as data', () => {
        const args = promptArguments(['__proto__=x', 'url=https://a/?b=c', 'constructor=']);
        assert.deepEqual(Object.keys(args), ['__proto__', 'url', 'constructor']);
        assert.equal(args.url, 'https://a/?b=c');
        assert.equal(Object.getPrototypeOf(args), Object.prototype, 'no prototype was set through "__proto__"');
        assert.equal(JSON.stringify(args), '{"__proto__":"x","url":"https://a/?b=c","constructor":""}');
    });
});

describe('prompts as text', () => {
    test('one line a prompt: name, two spaces, description; none without one', () => {
        const text = promptLines([{ name: 'a__one', description: 'First one' }, { name: 'a__two' }, { name: 'a__three', description: '  ' }]);
        assert.equal(text, 'a__one  First one\na__two\na__three\n');
    });

    test('a description of several lines is joined, and cut when long', () => {
        const long = `${'word '.repeat(40)}\nmore`;
        const [short, cut] = promptLines([
            { name: 'p', description: 'Line one\r\n\n  line two\n' },
            { name: 'q', description: long }
        ]).split('\n');
        assert.equal(short, 'p  Line one line two');
        assert.equal(cut!.length, 'q  '.length + 120);
        assert.ok(cut!.endsWith('...'));
        const single = 'x'.repeat(300);
        assert.equal(promptLines([{ name: 'r', description: single }]), `r  ${single}\n`, 'a single line is never cut');
    });

    test('terminal escapes in names, descriptions and text are shown as U+FFFD', () => {
        assert.equal(terminalSafe('a\u001b[2Jb\u0007c\u009bd\re\r\nf\tg'), 'a\uFFFD[2Jb\uFFFDc\uFFFDd\uFFFDe\nf\tg');
        // Bidirectional overrides and isolates reorder what is shown ("Trojan Source"): shown as U+FFFD too.
        assert.equal(terminalSafe('ok\u202Eevil\u2066x\u2069'), 'ok\uFFFDevil\uFFFDx\uFFFD');
        assert.equal(promptLines([{ name: 'x\u001b]0;t\u0007', description: 'd\u001b[31m' }]), 'x\uFFFD]0;t\uFFFD  d\uFFFD[31m\n');
    });

    test('messages under their roles, a blank line between them', () => {
        const text = messagesText([
            { role: 'user', content: { type: 'text', text: 'Hello\nthere' } },
            { role: 'assistant', content: { type: 'text', text: 'ends with a newline\n' } }
        ]);
        assert.equal(text, 'user:\nHello\nthere\n\nassistant:\nends with a newline\n');
    });

    test('what a terminal cannot show is one line naming its type and size', () => {
        const data = Buffer.from('0123456789').toString('base64');
        assert.equal(contentText({ type: 'image', data, mimeType: 'image/png' }), '[image image/png, 10 bytes]');
        assert.equal(contentText({ type: 'audio', data, mimeType: 'audio/wav' }), '[audio audio/wav, 10 bytes]');
        assert.equal(contentText({ type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'hello' } }), '[resource file:///a.txt (text/plain)]\nhello');
        assert.equal(contentText({ type: 'resource', resource: { uri: 'file:///c.bin', blob: data } }), '[resource file:///c.bin, 10 bytes]');
        assert.equal(contentText({ type: 'resource_link', uri: 'file:///b.txt', name: 'b.txt', mimeType: 'text/plain' }), '[resource link file:///b.txt (text/plain)]');
    });

    test('a content type of a later revision is named, not guessed at', () => {
        const future = { type: 'hologram', data: 'x' } as unknown as Parameters<typeof contentText>[0];
        assert.equal(contentText(future), '[hologram content]');
    });
});
