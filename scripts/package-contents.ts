/**
 * What the npm package must and may hold, as pure rules over `npm pack --json`'s file list (scripts/check-package.ts
 * runs npm; test/unit/package-contents.test.ts shows each rule failing).
 *
 * An allow-list, not a deny-list: a file outside it fails the check, so a new folder (or a `files` entry widened by
 * mistake) cannot slip test fixtures, benchmarks or secrets into a release. What must be there is derived from the
 * source tree where it can be (every module of src/ compiled, every file of the two pages), so a new module or page
 * asset is checked without editing this list.
 */

/** Root files users get with every install: what it is, its license, what changed. */
const REQUIRED_ROOT_FILES = ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'] as const;

/** Files the installed CLI reads at run time (src/setup/package-files.ts), or that the docs send users to. */
const REQUIRED_SHIPPED_FILES = ['config/gateway.schema.json', 'examples/gateway.json', 'examples/prompt-server.mjs'] as const;

/** Folders whose every file ships: the compiled gateway, the config's schema and dashboards, the examples. */
const ALLOWED_FOLDERS = ['dist/', 'config/', 'examples/'] as const;

/** Never in the package (named so that a failure says why, though the allow-list already refuses them). */
const FORBIDDEN_PREFIXES = ['src/', 'test/', 'bench/', 'conformance/', 'scripts/', 'runtimes/', 'deploy/', 'docs/', '.ci/', '.github/', 'node_modules/'] as const;

/** Folders of src/ served to browsers as they are, copied whole into dist/ by `npm run build`. */
export const PAGE_FOLDERS = ['observability/dashboard', 'downstream/http/catalog-page'] as const;

/** The source files that decide what dist/ must hold, relative to src/ ('/' separated). */
export interface SourceTree {
    /** Every `.ts` module of src/ (each compiles to dist/<same>.js). */
    modules: readonly string[];
    /** Every file of the PAGE_FOLDERS (each copied to dist/<same>). */
    pageFiles: readonly string[];
}

/** Each module of src/ as tsc emits it into dist/. */
function compiledFiles(tree: SourceTree): string[] {
    return tree.modules.map(module => `dist/${module.replace(/\.ts$/, '.js')}`);
}

/** dist/ files the package must hold: every module compiled (the CLI among them), every page file. */
function requiredDistFiles(tree: SourceTree): string[] {
    return [...compiledFiles(tree), ...tree.pageFiles.map(file => `dist/${file}`)];
}

/** Every problem with a package's file list, one line each; none means the package is clean. */
export function packageProblems(packed: readonly string[], tree: SourceTree): string[] {
    const files = new Set(packed);
    const problems: string[] = [];
    for (const needed of [...REQUIRED_ROOT_FILES, ...REQUIRED_SHIPPED_FILES, 'dist/cli.js', ...requiredDistFiles(tree)]) {
        if (!files.has(needed)) problems.push(`missing: ${needed}`);
    }
    if (!packed.some(file => file.startsWith('examples/formats/'))) problems.push('missing: examples/formats/ (init offers its examples)');
    const built = builtFiles(tree);
    for (const file of packed) {
        const forbidden = FORBIDDEN_PREFIXES.find(prefix => file.startsWith(prefix));
        if (forbidden !== undefined) problems.push(`not for the package (${forbidden}): ${file}`);
        else if (!isAllowed(file)) problems.push(`not on the allow-list (scripts/package-contents.ts): ${file}`);
        // tsc never deletes what it emitted once: a module removed from src/ leaves its old output in a reused dist/.
        else if (file.startsWith('dist/') && !built.has(file)) problems.push(`no source in src/ (a stale build: npm pack rebuilds dist/ from scratch): ${file}`);
    }
    return problems;
}

/** What `npm run build` makes of the tree: each module's .js and its source map, and the pages' files. */
function builtFiles(tree: SourceTree): Set<string> {
    return new Set([...requiredDistFiles(tree), ...compiledFiles(tree).map(file => `${file}.map`)]);
}

function isAllowed(file: string): boolean {
    return (REQUIRED_ROOT_FILES as readonly string[]).includes(file) || ALLOWED_FOLDERS.some(folder => file.startsWith(folder));
}
