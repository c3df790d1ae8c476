// ESLint flat config (ESLint 10 + typescript-eslint 8). `npm run lint` runs `eslint .`.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// The Node.js globals the plain-JS files use. (The `globals` package is not a dependency;
// TypeScript files don't need this: typescript-eslint turns `no-undef` off for them, tsc checks it.)
const nodeGlobals = Object.fromEntries(
    [
        'AbortController',
        'AbortSignal',
        'Buffer',
        'Headers',
        'Request',
        'Response',
        'URL',
        'URLSearchParams',
        'TextDecoder',
        'TextEncoder',
        'clearInterval',
        'clearTimeout',
        'console',
        'fetch',
        'global',
        'globalThis',
        'process',
        'queueMicrotask',
        'setImmediate',
        'setInterval',
        'setTimeout',
        'structuredClone'
    ].map(name => [name, 'readonly'])
);

// The browser globals of the pages' scripts (the dashboard's and the prompt catalog's, served as they are, no build step).
const browserGlobals = Object.fromEntries(
    [
        'AbortController',
        'AbortSignal',
        'Headers',
        'Intl',
        'ReadableStream',
        'Response',
        'TextDecoder',
        'TextEncoder',
        'URL',
        'URLSearchParams',
        'addEventListener',
        'btoa',
        'cancelAnimationFrame',
        'clearInterval',
        'clearTimeout',
        'console',
        'document',
        'fetch',
        'history',
        'localStorage',
        'location',
        'navigator',
        'performance',
        'removeEventListener',
        'requestAnimationFrame',
        'sessionStorage',
        'setInterval',
        'setTimeout',
        'window'
    ].map(name => [name, 'readonly'])
);

/**
 * The layers of src/, bottom first: each may import its own and lower ones, never a higher one (what a lower layer
 * needs from above comes in as a parameter). A folder of src/, or a file directly in it. README.md "Layout" says why.
 */
const LAYERS = [
    'lib',
    'protocol',
    'diagnostics',
    'http-server',
    'version.ts',
    'config',
    'upstream',
    'catalog',
    'policy',
    'downstream',
    'cluster',
    'observability',
    'lifecycle',
    'gateway.ts',
    'setup',
    'cli.ts'
];

/** The one way up: the upstream layer implements the catalog's port, whose types and error classes it imports. */
const PORT = { layer: 'upstream', may: 'catalog', file: 'upstream-port.js' };

/**
 * Above the port, the upstream layer is reached through it alone: these layers import nothing of src/upstream (a
 * generic helper that lived there moves to src/lib). Only what builds and watches the upstreams imports them.
 */
const BEHIND_THE_PORT = ['catalog', 'policy', 'downstream', 'cluster'];

const escapeRegex = text => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The start of a relative specifier that reaches `target` (a folder or a file of src/) from a file of `layer`. */
function reaching(layer, target) {
    // A file directly in src/ reaches a folder as './x/'; a file in a layer's folder (or deeper) climbs with '../'.
    const climb = layer.endsWith('.ts') ? '\\./' : '(\\.\\./)+';
    if (target.endsWith('.ts')) return `^${climb}${escapeRegex(target.replace(/\.ts$/, '.js'))}$`;
    const exception = layer === PORT.layer && target === PORT.may ? `(?!${escapeRegex(PORT.file)}$)` : '';
    return `^${climb}${escapeRegex(target)}/${exception}`;
}

/**
 * One no-restricted-imports block per layer, one pattern per layer it may not import (type-only imports included):
 * a relative specifier that climbs out of the layer into that one (`../../observability/routes.js`, `../gateway.js`).
 * src/ has no path aliases; a dynamic import() is not checked (src has none).
 */
function layerRules() {
    return LAYERS.slice(0, -1).map((layer, index) => {
        const above = LAYERS.slice(index + 1).map(target => ({
            regex: reaching(layer, target),
            caseSensitive: true,
            message: `src/${layer} sits below src/${target} (eslint.config.js LAYERS, README "Layout"): take what it needs as a parameter from the code that composes both, or move the shared piece down (src/lib for a pure helper).`
        }));
        const port = BEHIND_THE_PORT.includes(layer)
            ? [
                  {
                      regex: reaching(layer, PORT.layer),
                      caseSensitive: true,
                      message: `src/${layer} reaches upstreams only through the catalog's port (src/catalog/upstream-port.ts): declare what it needs there, or move a generic helper to src/lib.`
                  }
              ]
            : [];
        return {
            files: [layer.endsWith('.ts') ? `src/${layer}` : `src/${layer}/**/*.ts`],
            rules: { 'no-restricted-imports': ['error', { patterns: [...above, ...port] }] }
        };
    });
}

export default defineConfig(
    {
        ignores: ['dist/', '.test-build/', 'node_modules/', 'coverage/', 'test-results/', '.bench/', 'runtimes/*/node_modules/', 'conformance/results/']
    },

    // Plain JavaScript: examples/**/*.mjs and the root *.js files (this config).
    {
        files: ['examples/**/*.mjs', '*.js'],
        extends: [js.configs.recommended],
        languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: nodeGlobals }
    },

    // The pages' browser scripts: the dashboard's and the prompt catalog's.
    {
        files: ['src/observability/dashboard/*.js', 'src/downstream/http/catalog-page/*.js'],
        extends: [js.configs.recommended],
        languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: browserGlobals }
    },

    // TypeScript, type-aware (tsconfig.check.json covers src, test, bench, scripts, examples, conformance).
    {
        files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'conformance/**/*.ts'],
        extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
        languageOptions: {
            ecmaVersion: 'latest',
            sourceType: 'module',
            // projectService only finds tsconfig.json (include: src), so test/bench/scripts files would be
            // "not found by the project service"; point at the check config that includes them all.
            parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname }
        },
        rules: {
            '@typescript-eslint/no-explicit-any': 'error',
            '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
            '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports' }],
            '@typescript-eslint/no-floating-promises': 'error',
            // Off: its only hits are the MCP SDK's own idiom `error.code === ProtocolErrorCode.X`, where
            // ProtocolError.code is typed `number` (any JSON-RPC code) and ProtocolErrorCode is a numeric
            // enum; comparing a number with a numeric enum member is exactly what the SDK intends.
            '@typescript-eslint/no-unsafe-enum-comparison': 'off'
        }
    },

    // Tests: relax only what tests legitimately need.
    {
        files: ['test/**/*.ts'],
        rules: {
            // node:test's describe()/it()/test() return promises the runner tracks itself.
            '@typescript-eslint/no-floating-promises': [
                'error',
                {
                    allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }]
                }
            ]
        }
    },

    ...layerRules(),

    // Short functions: most well under 40 lines, none over 100 (blank lines and comments aside).
    {
        files: ['src/**/*.ts'],
        rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true, IIFEs: true }] }
    }
);
