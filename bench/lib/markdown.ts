/** Markdown for BENCHMARKS.md. */

/** A table whose first column is left-aligned and the others right-aligned (numbers). */
export const table = (head: string[], rows: string[][]) =>
    [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map(row => `| ${row.join(' | ')} |`)].join('\n');
