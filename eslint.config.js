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

// The browser globals of the dashboard's script (src/observability/dashboard/, served as is, no build step).
const browserGlobals = Object.fromEntries(
    [
        'AbortController',
        'Headers',
        'Intl',
        'URL',
        'URLSearchParams',
        'cancelAnimationFrame',
        'clearInterval',
        'clearTimeout',
        'console',
        'document',
        'fetch',
        'localStorage',
        'location',
        'navigator',
        'performance',
        'requestAnimationFrame',
        'sessionStorage',
        'setInterval',
        'setTimeout',
        'window'
    ].map(name => [name, 'readonly'])
);

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

    // The dashboard's browser script.
    {
        files: ['src/observability/dashboard/*.js'],
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
    }
);
