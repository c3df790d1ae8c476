/** The package's allow-list (scripts/package-contents.ts), which scripts/check-package.ts applies to `npm pack`'s list. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { packageProblems, type SourceTree } from '../../scripts/package-contents.js';

const TREE: SourceTree = {
    modules: ['cli.ts', 'version.ts', 'catalog/service.ts'],
    pageFiles: ['observability/dashboard/index.html', 'downstream/http/catalog-page/catalog.js']
};

const CLEAN = [
    'package.json',
    'README.md',
    'LICENSE',
    'CHANGELOG.md',
    'config/gateway.schema.json',
    'config/grafana-dashboard.json',
    'examples/gateway.json',
    'examples/prompt-server.mjs',
    'examples/formats/skills/release-notes/SKILL.md',
    'dist/cli.js',
    'dist/cli.js.map',
    'dist/version.js',
    'dist/catalog/service.js',
    'dist/catalog/service.js.map',
    'dist/observability/dashboard/index.html',
    'dist/downstream/http/catalog-page/catalog.js'
];

test('a package with every required file and nothing else is clean', () => {
    assert.deepEqual(packageProblems(CLEAN, TREE), []);
});

test('each required file is named when it is missing: root files, runtime files, every compiled module and page file', () => {
    for (const file of [
        'LICENSE',
        'CHANGELOG.md',
        'README.md',
        'config/gateway.schema.json',
        'examples/prompt-server.mjs',
        'dist/catalog/service.js',
        'dist/downstream/http/catalog-page/catalog.js'
    ]) {
        assert.deepEqual(
            packageProblems(
                CLEAN.filter(packed => packed !== file),
                TREE
            ),
            [`missing: ${file}`],
            file
        );
    }
    assert.deepEqual(
        packageProblems(
            CLEAN.filter(packed => !packed.startsWith('examples/formats/')),
            TREE
        ),
        ['missing: examples/formats/ (init offers its examples)']
    );
});

test('sources, tests, benchmarks, conformance and scripts are refused by name', () => {
    const extra = ['src/cli.ts', 'test/unit/x.test.ts', 'bench/run.ts', 'conformance/run.ts', 'scripts/check-package.ts', 'docs/security.md'];
    assert.deepEqual(packageProblems([...CLEAN, ...extra], TREE), [
        'not for the package (src/): src/cli.ts',
        'not for the package (test/): test/unit/x.test.ts',
        'not for the package (bench/): bench/run.ts',
        'not for the package (conformance/): conformance/run.ts',
        'not for the package (scripts/): scripts/check-package.ts',
        'not for the package (docs/): docs/security.md'
    ]);
});

test('a file outside the allow-list is refused, and so is build output with no source', () => {
    assert.deepEqual(packageProblems([...CLEAN, '.env', 'gateway.example.json', 'dist/removed-module.js', 'dist/version.js.map.orig'], TREE), [
        'not on the allow-list (scripts/package-contents.ts): .env',
        'not on the allow-list (scripts/package-contents.ts): gateway.example.json',
        'no source in src/ (a stale build: npm pack rebuilds dist/ from scratch): dist/removed-module.js',
        'no source in src/ (a stale build: npm pack rebuilds dist/ from scratch): dist/version.js.map.orig'
    ]);
});
