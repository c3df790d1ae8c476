/**
 * The monitoring files users get in config/ against what the gateway really
 * exports: every metric family, label and label value the Grafana dashboard
 * queries is on a live gateway's /metrics, its variables and layout are sound
 * for an import, and the Prometheus example scrapes the gateway's metrics path.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { parseConfig } from '../src/config/load.js';
import type { RunningGateway } from '../src/gateway.js';
import { connectHttp, ROOT, rpcError, startTestGateway, stdioFixture, upstreamsReady, waitFor, type TeardownScope } from './helpers.js';
import { ALICE, connectInputClient, interactiveStdio } from './input-clients.js';
import { familiesOf, parseExposition, sampleList, type FamilySummary } from './prometheus.js';
import { initializeBody, post } from './raw-http.js';

interface GridPos {
    x: number;
    y: number;
    w: number;
    h: number;
}

interface DataSourceRef {
    type?: string;
    uid?: string;
}

interface Target {
    refId?: string;
    expr?: string;
    legendFormat?: string;
    datasource?: DataSourceRef;
}

interface Panel {
    id: number;
    type: string;
    title: string;
    description?: string;
    gridPos: GridPos;
    datasource?: DataSourceRef;
    targets?: Target[];
    /** The panels of a collapsed row. */
    panels?: Panel[];
}

interface Variable {
    name: string;
    type: string;
    /** A string in older exports, an object from Grafana 10's Prometheus variable editor. */
    query?: string | { query?: string };
    definition?: string;
    current?: { value?: unknown };
    multi?: boolean;
    includeAll?: boolean;
    allValue?: string;
}

interface Dashboard {
    uid: string;
    title: string;
    schemaVersion: number;
    refresh: string;
    time: { from: string; to: string };
    __inputs?: { name: string; type: string; pluginId: string }[];
    __requires?: { type: string; id: string }[];
    templating: { list: Variable[] };
    panels: Panel[];
}

const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'config/grafana-dashboard.json'), 'utf8')) as Dashboard;
const prometheusExample = readFileSync(path.join(ROOT, 'config/prometheus.example.yml'), 'utf8');

const GRID_COLUMNS = 24;
/** Families the dashboard may query: the gateway's own and prom-client's process defaults. */
/** The gateway's own, the MCP operation histograms OpenTelemetry's conventions name, and prom-client's process metrics. */
const ALLOWED_PREFIXES = ['mcp_gateway_', 'mcp_server_operation_', 'mcp_client_operation_', 'process_', 'nodejs_'];
/** Labels Prometheus adds to every scraped series: they are never on /metrics itself. */
const TARGET_LABELS = new Set(['instance', 'job']);
/** Grafana's own variables, usable in any query. */
const GRAFANA_VARIABLES = new Set(['__rate_interval', '__interval', '__interval_ms', '__range', '__range_s', '__range_ms']);
/** Words of PromQL that look like identifiers but are neither functions (those are followed by "(") nor metrics. */
const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);

/** Every panel, rows and the panels of collapsed rows included. */
function allPanels(panels: Panel[]): Panel[] {
    return panels.flatMap(panel => [panel, ...allPanels(panel.panels ?? [])]);
}

interface Query {
    where: string;
    expr: string;
    legendFormat?: string;
    /** Panel targets are filtered by the dashboard's variables; variable queries themselves are not. */
    panel: boolean;
}

/** Every PromQL expression of the dashboard: panel targets and the queries of query variables. */
function queries(): Query[] {
    const found: Query[] = [];
    for (const panel of allPanels(dashboard.panels)) {
        for (const target of panel.targets ?? []) {
            if (target.expr === undefined) continue;
            const query: Query = { where: `panel ${panel.id} "${panel.title}" ${target.refId}`, expr: target.expr, panel: true };
            if (target.legendFormat !== undefined) query.legendFormat = target.legendFormat;
            found.push(query);
        }
    }
    for (const variable of dashboard.templating.list) {
        if (variable.type !== 'query') continue;
        const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
        for (const expr of new Set([query, variable.definition])) {
            if (expr !== undefined && expr !== '') found.push({ where: `variable $${variable.name}`, expr, panel: false });
        }
    }
    return found;
}

const STRING = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g;
const GROUPING = /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

/**
 * The metric names of an expression: what is left once strings, label matchers, range selectors, variables,
 * grouping clauses and label_values' label are taken out, minus functions (followed by "(") and PromQL keywords.
 */
function metricNames(expr: string): string[] {
    const code = expr
        .replace(STRING, '""')
        .replace(/\{[^}]*\}/g, ' ')
        // Grafana's label_values(metric, label): the label is no metric.
        .replace(/(\blabel_values\s*\([^,()]*),\s*\w+\s*\)/g, '$1)')
        .replace(/\[[^\]]*\]/g, ' ')
        .replace(/\$\{?\w+(?::\w+)?\}?/g, ' ')
        .replace(GROUPING, ' ');
    const names = new Set<string>();
    for (const match of code.matchAll(/(?<![\w:.])([A-Za-z_:][\w:]*)(?![\w:]|\s*\()/g)) {
        const name = match[1]!;
        if (!PROMQL_WORDS.has(name.toLowerCase())) names.add(name);
    }
    return [...names];
}

interface Matcher {
    label: string;
    op: string;
    value: string;
}

interface Selector {
    metric: string;
    matchers: Matcher[];
}

/** Every `metric{...}` of an expression with its matchers. */
function selectors(expr: string): Selector[] {
    const found: Selector[] = [];
    for (const match of expr.matchAll(/([A-Za-z_:][\w:]*)\s*\{((?:[^}"]|"(?:[^"\\]|\\.)*")*)\}/g)) {
        const matchers = [...match[2]!.matchAll(/([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)].map(([, label, op, value]) => ({
            label: label!,
            op: op!,
            value: value!
        }));
        found.push({ metric: match[1]!, matchers });
    }
    return found;
}

/** Labels of the `by (...)`, `on (...)`, ... clauses of an expression, by keyword. */
function groupings(expr: string): { keyword: string; labels: string[] }[] {
    return [...expr.replace(STRING, '""').matchAll(GROUPING)].map(([, keyword, labels]) => ({
        keyword: keyword!,
        labels: labels!
            .split(',')
            .map(label => label.trim())
            .filter(label => label !== '')
    }));
}

/** The `label_values(metric, label)` of a Grafana variable query. */
function labelValuesQuery(expr: string): { metric: string; label: string } | undefined {
    const match = /^\s*label_values\(\s*([A-Za-z_:][\w:]*)(?:\{[^}]*\})?\s*,\s*(\w+)\s*\)\s*$/.exec(expr);
    return match ? { metric: match[1]!, label: match[2]! } : undefined;
}

function overlaps(a: GridPos, b: GridPos): boolean {
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

describe('config/grafana-dashboard.json', () => {
    const panels = allPanels(dashboard.panels);
    const variables = new Map(dashboard.templating.list.map(variable => [variable.name, variable]));

    test('is an importable export: uid, title, refresh, time range and the DS_PROMETHEUS input', () => {
        assert.equal(dashboard.uid, 'mcp-prompt-gateway');
        assert.equal(dashboard.title, 'MCP Prompt Gateway');
        assert.ok(dashboard.schemaVersion >= 39, `schemaVersion ${dashboard.schemaVersion}`);
        assert.equal(dashboard.refresh, '10s');
        assert.deepEqual(dashboard.time, { from: 'now-1h', to: 'now' });
        const input = dashboard.__inputs?.find(candidate => candidate.name === 'DS_PROMETHEUS');
        assert.deepEqual(input && { type: input.type, pluginId: input.pluginId }, { type: 'datasource', pluginId: 'prometheus' });
        // Every panel type must be required, or the import does not offer to install a missing plugin.
        const required = new Set((dashboard.__requires ?? []).map(entry => `${entry.type}:${entry.id}`));
        for (const needed of ['grafana:grafana', 'datasource:prometheus', ...new Set(panels.filter(panel => panel.type !== 'row').map(panel => `panel:${panel.type}`))]) {
            assert.ok(required.has(needed), `__requires lacks ${needed}`);
        }
    });

    test('has the datasource, upstream and client variables', () => {
        const datasource = variables.get('datasource');
        assert.ok(datasource, 'no $datasource variable');
        assert.equal(datasource.type, 'datasource');
        assert.equal(datasource.query, 'prometheus');
        assert.equal(datasource.current?.value, '${DS_PROMETHEUS}', 'the import fills in the chosen data source');
        for (const [name, query] of [
            ['upstream', 'label_values(mcp_gateway_upstream_up, upstream)'],
            ['client', 'label_values(mcp_gateway_prompt_gets_total, client)']
        ] as const) {
            const variable = variables.get(name);
            assert.ok(variable, `no $${name} variable`);
            assert.equal(variable.type, 'query', name);
            const text = typeof variable.query === 'string' ? variable.query : variable.query?.query;
            assert.equal(text, query, name);
            assert.equal(variable.multi, true, `${name} is multi-value`);
            assert.equal(variable.includeAll, true, `${name} includes All`);
            assert.equal(variable.allValue, '.*', `${name}'s All matches every value, also ones not seen yet`);
        }
    });

    test('panel ids are unique and no two panels overlap on the 24-column grid', () => {
        const ids = panels.map(panel => panel.id);
        assert.ok(
            ids.every(id => Number.isInteger(id) && id > 0),
            'ids are positive integers'
        );
        assert.deepEqual(
            ids.filter((id, i) => ids.indexOf(id) !== i),
            [],
            'duplicate panel ids'
        );
        // The top level, and the panels of each collapsed row among themselves (Grafana lays them out on expanding).
        for (const level of [dashboard.panels, ...dashboard.panels.filter(panel => (panel.panels ?? []).length > 0).map(row => row.panels!)]) {
            for (const panel of level) {
                const { x, y, w, h } = panel.gridPos;
                assert.ok([x, y, w, h].every(Number.isInteger) && x >= 0 && y >= 0 && w >= 1 && h >= 1, `panel ${panel.id} gridPos ${JSON.stringify(panel.gridPos)}`);
                assert.ok(x + w <= GRID_COLUMNS, `panel ${panel.id} "${panel.title}" is wider than the grid`);
            }
            for (const [i, a] of level.entries()) {
                for (const b of level.slice(i + 1)) assert.ok(!overlaps(a.gridPos, b.gridPos), `panels ${a.id} "${a.title}" and ${b.id} "${b.title}" overlap`);
            }
        }
    });

    test('every panel has a description and queries the templated data source', () => {
        for (const panel of panels.filter(candidate => candidate.type !== 'row')) {
            const where = `panel ${panel.id} "${panel.title}"`;
            assert.ok((panel.description ?? '').length > 0, `${where} has no description`);
            assert.deepEqual(panel.datasource, { type: 'prometheus', uid: '${datasource}' }, where);
            const targets = panel.targets ?? [];
            assert.ok(targets.length > 0 && targets.every(target => (target.expr ?? '').trim() !== ''), `${where} has a target without a query`);
            for (const target of targets) assert.deepEqual(target.datasource, { type: 'prometheus', uid: '${datasource}' }, `${where} ${target.refId}`);
            const refIds = targets.map(target => target.refId);
            assert.equal(new Set(refIds).size, refIds.length, `${where} repeats a refId`);
        }
    });

    test("queries use only defined variables and only the gateway's metric families", () => {
        const problems: string[] = [];
        for (const { where, expr } of queries()) {
            for (const [, name] of expr.matchAll(/\$\{?(\w+)/g)) {
                if (!variables.has(name!) && !GRAFANA_VARIABLES.has(name!)) problems.push(`${where}: unknown variable $${name}`);
            }
            const names = metricNames(expr);
            if (names.length === 0) problems.push(`${where}: no metric in ${JSON.stringify(expr)}`);
            for (const name of names) {
                if (!ALLOWED_PREFIXES.some(prefix => name.startsWith(prefix))) problems.push(`${where}: ${name} is not a gateway metric`);
            }
        }
        assert.deepEqual(problems, []);
    });
});

describe('config/prometheus.example.yml', () => {
    /** The lines Prometheus reads: comments and blank lines out. */
    const active = prometheusExample.split('\n').filter(line => line.trim() !== '' && !line.trim().startsWith('#'));
    const commented = prometheusExample.split('\n').filter(line => line.trim().startsWith('#'));
    const has = (lines: string[], pattern: RegExp) => lines.some(line => pattern.test(line));

    test("scrapes the gateway's metrics path every 15 s", () => {
        assert.ok(!prometheusExample.includes('\t'), 'YAML indentation cannot use tabs');
        for (const line of active) assert.ok((line.length - line.trimStart().length) % 2 === 0, `odd indentation: ${JSON.stringify(line)}`);
        const defaults = parseConfig(JSON.stringify({ upstreams: [stdioFixture('up')] }), 'test config', {});
        assert.equal(defaults.metrics.path, '/metrics');
        assert.ok(has(active, /^\s*-\s+job_name:\s*["']?mcp-prompt-gateway["']?\s*$/), 'job mcp-prompt-gateway');
        assert.ok(has(active, new RegExp(`^\\s+metrics_path:\\s*["']?${defaults.metrics.path}["']?\\s*$`)), `metrics_path: ${defaults.metrics.path}`);
        assert.ok(has(active, /^\s+scrape_interval:\s*15s\s*$/), 'scrape_interval: 15s');
    });

    test('targets the MCP listener of gateway.example.json, with the separate metrics address and the bearer token as comments', () => {
        const example = JSON.parse(readFileSync(path.join(ROOT, 'gateway.example.json'), 'utf8')) as { listen: { host: string; port: number } };
        const target = `${example.listen.host}:${example.listen.port}`;
        assert.ok(has(active, new RegExp(`^\\s+-\\s+["']?${target.replaceAll('.', '\\.')}["']?\\s*$`)), `target ${target}`);
        assert.ok(has(commented, /^\s*#\s*-\s+["']?127\.0\.0\.1:\d+["']?\s*$/), 'a commented target for metrics.listen');
        assert.ok(has(commented, /^\s*#\s*authorization:\s*$/), 'a commented authorization block');
        assert.ok(has(commented, /^\s*#\s+type:\s*Bearer\s*$/), 'of type Bearer');
        assert.ok(has(commented, /^\s*#\s+credentials_file:\s*\S+/), 'reading the token from a file');
    });
});

type Family = FamilySummary;

/** The family a name in a query belongs to: itself, or the histogram or summary of its _bucket / _sum / _count. */
function familyOf(name: string, families: Map<string, Family>): string | undefined {
    if (families.has(name)) return name;
    const match = /^(.+)_(bucket|sum|count)$/.exec(name);
    const base = match && families.get(match[1]!);
    if (base && (base.type === 'HISTOGRAM' || (base.type === 'SUMMARY' && match[2] !== 'bucket'))) return match[1];
    return undefined;
}

/** Labels a family's samples carry beyond those on /metrics: le on histogram buckets, quantile on summaries. */
function hasLabel(family: Family, label: string): boolean {
    return family.labels.has(label) || (label === 'le' && family.type === 'HISTOGRAM') || (label === 'quantile' && family.type === 'SUMMARY');
}

describe("the dashboard against a live gateway's /metrics", () => {
    let gateway: RunningGateway;
    let client: Client;
    let metrics: { status: number; contentType: string | null; text: string };
    const teardown: (() => unknown)[] = [];
    const scope: TeardownScope = { after: close => void teardown.push(close) };

    before(async () => {
        gateway = await startTestGateway({
            reconnect: { initialMs: 50, maxMs: 200 },
            notifications: { debounceMs: 20, maxDelayMs: 100 },
            upstreams: [stdioFixture('up', { prompts: 2 }), interactiveStdio('ask')]
        });
        client = await connectHttp(gateway.url!);
        // A prompt that asks its client: the input metrics get samples.
        await upstreamsReady(gateway, ['ask']);
        await (await connectInputClient(scope, { url: gateway.url! }, ALICE)).get('ask__confirm', { who: 'alice' });
        // Make the gateway record every family the dashboard filters or groups by a label, so those labels can be seen.
        await client.listPrompts();
        await client.listPrompts();
        await client.getPrompt({ name: 'up__prompt-000' });
        await rpcError(client.getPrompt({ name: 'no-such-prompt' }));
        await client.complete({ ref: { type: 'ref/prompt', name: 'up__with-required' }, argument: { name: 'topic', value: 'm' } });
        await client.getPrompt({ name: 'up__emit-list-changed', arguments: { count: '1', add: 'grafana-test' } });
        const refused = await post(gateway.url!, initializeBody(), { origin: 'http://evil.example' });
        await refused.body?.cancel();
        // A lost upstream: a fault and a reconnect.
        await rpcError(client.getPrompt({ name: 'up__crash' }));
        await waitFor(() => gateway.upstreams[0]!.state === 'ready', 15_000, 'the upstream to reconnect');
        await client.getPrompt({ name: 'up__prompt-001' });

        const response = await fetch(new URL('/metrics', new URL(gateway.url!).origin));
        metrics = { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
    });

    after(async () => {
        for (const close of teardown.reverse()) await close();
        await client?.close();
        await gateway?.close();
    });

    /** The parsed exposition, once /metrics answered. */
    function exported(): Map<string, Family> {
        assert.equal(metrics.status, 200, `GET /metrics answered ${metrics.status}: ${metrics.text.slice(0, 200)}`);
        assert.match(metrics.contentType ?? '', /^text\/plain/);
        return familiesOf(parseExposition(metrics.text));
    }

    test('every metric the dashboard queries is exported', () => {
        const families = exported();
        const problems: string[] = [];
        for (const { where, expr } of queries()) {
            for (const name of metricNames(expr)) if (familyOf(name, families) === undefined) problems.push(`${where}: ${name} is not on /metrics`);
        }
        assert.deepEqual(problems, []);
    });

    test('every label the dashboard matches, groups or shows exists on the metrics of its query', () => {
        const families = exported();
        const problems: string[] = [];
        for (const { where, expr, legendFormat } of queries()) {
            const used = metricNames(expr)
                .map(name => familyOf(name, families))
                .filter(name => name !== undefined);
            for (const name of used) {
                if (families.get(name)!.samples === 0) problems.push(`${where}: ${name} has no samples yet, so its labels cannot be checked (record one in before())`);
            }
            const onSome = (label: string) => TARGET_LABELS.has(label) || used.some(name => hasLabel(families.get(name)!, label));

            for (const { metric, matchers } of selectors(expr)) {
                const name = familyOf(metric, families);
                if (name === undefined) continue; // Reported by the test above.
                const family = families.get(name)!;
                for (const { label, op, value } of matchers) {
                    if (!hasLabel(family, label)) {
                        problems.push(`${where}: ${metric} has no label ${label}`);
                        continue;
                    }
                    // A literal equality must name a value the gateway uses (e.g. outcome="ok", quantile="0.95").
                    const values = family.labels.get(label);
                    if ((op === '=' || op === '!=') && !value.includes('$') && values !== undefined && !values.has(value)) {
                        problems.push(`${where}: ${metric}{${label}${op}"${value}"} matches no exported value (${[...values].join(', ')})`);
                    }
                }
            }
            const grouped = groupings(expr);
            for (const { keyword, labels } of grouped) {
                for (const label of labels) if (!onSome(label)) problems.push(`${where}: ${keyword} (${label}): no metric of the query has it`);
            }
            const variableQuery = labelValuesQuery(expr);
            if (variableQuery !== undefined) {
                const name = familyOf(variableQuery.metric, families);
                if (name !== undefined && !hasLabel(families.get(name)!, variableQuery.label))
                    problems.push(`${where}: ${variableQuery.metric} has no label ${variableQuery.label}`);
            }
            // A legend can only show labels the result keeps: the `by` labels once the query aggregates.
            const kept = grouped.filter(({ keyword }) => keyword === 'by').flatMap(({ labels }) => labels);
            for (const [, label] of (legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)) {
                const shown = kept.length > 0 ? kept.includes(label!) : onSome(label!);
                if (!shown) problems.push(`${where}: the legend shows {{${label}}}, which the query does not keep`);
            }
        }
        assert.deepEqual(problems, []);
    });

    /**
     * Whether the series a selector picks by its `=` matchers carry `label` (prompts/list operations have no owner
     * upstream); when it picks none live, whether any series of the family does.
     */
    function selectedCarry(metric: string, matchers: Matcher[], label: string, family: Family): boolean {
        const equal = matchers.filter(matcher => matcher.op === '=');
        const picked = sampleList(parseExposition(metrics.text), metric).filter(sample => equal.every(matcher => sample.labels[matcher.label] === matcher.value));
        return picked.length === 0 ? family.labels.has(label) : picked.some(sample => label in sample.labels);
    }

    test('panels filter by $upstream and $client wherever the series they select have that label', () => {
        const families = exported();
        const problems: string[] = [];
        for (const { where, expr } of queries().filter(query => query.panel)) {
            const withBraces = selectors(expr);
            // Bare metric names (no braces) must be filtered too when they have the label.
            const bare = metricNames(expr)
                .filter(name => !withBraces.some(selector => selector.metric === name))
                .map(name => ({ metric: name, matchers: [] as Matcher[] }));
            for (const { metric, matchers } of [...withBraces, ...bare]) {
                const name = familyOf(metric, families);
                if (name === undefined) continue;
                for (const label of ['upstream', 'client']) {
                    if (!selectedCarry(metric, matchers, label, families.get(name)!)) continue;
                    if (!matchers.some(matcher => matcher.label === label && matcher.op === '=~' && matcher.value === `$${label}`)) {
                        problems.push(`${where}: ${metric} is not filtered by ${label}=~"$${label}"`);
                    }
                }
            }
        }
        assert.deepEqual(problems, []);
    });
});
