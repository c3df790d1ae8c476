// @ts-nocheck -- browser code: the project's typecheck has Node's types only, no DOM lib.
/**
 * The gateway's live dashboard: polls the data URL every 2 s and renders it.
 *
 * Served as a static file under a strict CSP (no inline script or style), so this file builds
 * DOM nodes itself. Prompt, upstream and client names come from other servers and clients:
 * data from the JSON only ever reaches the page through textContent and attributes, never
 * through innerHTML.
 */

const POLL_INTERVAL_MS = 2000;
// The loop only reschedules after an answer, so a hung request must not stall it forever.
const FETCH_TIMEOUT_MS = 10000;
const TOKEN_KEY = 'mcp-prompt-gateway.metrics-token';
const DASH = '–';

const dataUrl = document.querySelector('meta[name="dashboard-data"]')?.content || 'data';
const counts = new Intl.NumberFormat('en-US');

const $ = selector => document.querySelector(selector);
const ui = {
    main: $('[data-view="main"]'),
    auth: $('[data-view="auth"]'),
    authMessage: $('[data-field="auth-message"]'),
    tokenInput: $('#auth-token'),
    banner: $('[data-field="banner"]'),
    bannerText: $('[data-field="banner-text"]'),
    liveLabel: $('[data-field="live-label"]'),
    chart: $('svg[data-chart="prompt-gets"]')
};

let token = loadToken();
let pollTimer;
let pollGeneration = 0;
let lastData;
let lastActivityKey = '';

// --- formatting ---

const isNumber = value => typeof value === 'number' && Number.isFinite(value);
const pad = value => String(value).padStart(2, '0');

function formatCount(value) {
    return isNumber(value) ? counts.format(value) : DASH;
}

/** Sub-millisecond latencies are the gateway's own overhead: keep two decimals there. */
function formatMs(ms) {
    if (!isNumber(ms)) return DASH;
    // Thresholds sit where rounding would carry over (0.999 is "1.0 ms", 99.97 is "100 ms").
    if (ms < 0.995) return `${ms.toFixed(2)} ms`;
    if (ms < 99.95) return `${ms.toFixed(1)} ms`;
    return `${counts.format(Math.round(ms))} ms`;
}

function formatRate(rate) {
    return isNumber(rate) ? `${(rate * 100).toFixed(1)}%` : DASH;
}

function formatClock(iso) {
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) return DASH;
    return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function formatUptime(totalSeconds) {
    const s = Math.max(0, Math.floor(totalSeconds || 0));
    const [days, hours, minutes, seconds] = [Math.floor(s / 86400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60, s % 60];
    if (days) return `${days}d ${hours}h`;
    if (hours) return `${hours}h ${pad(minutes)}m`;
    if (minutes) return `${minutes}m ${pad(seconds)}s`;
    return `${seconds}s`;
}

/** A span of time for the chart caption: "5 s", "10 min", "2 h". */
function formatSpan(seconds) {
    if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
    if (seconds >= 60) return `${Math.round(seconds / 60)} min`;
    return `${seconds} s`;
}

// --- DOM helpers ---

/** Writes only on change, so unchanged cells are not touched every 2 s. */
function setText(node, text) {
    if (node && node.textContent !== text) node.textContent = text;
}

function field(root, name) {
    return root.querySelector(`[data-field="${name}"]`);
}

function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
}

/** A row with one `td[data-field]` per name; names listed in `numeric` are right-aligned. */
function buildRow(fields, numeric) {
    const row = document.createElement('tr');
    for (const name of fields) {
        const cell = element('td', numeric.includes(name) ? 'num' : '');
        cell.dataset.field = name;
        row.append(cell);
    }
    return row;
}

/**
 * Keyed update of a table body: existing rows are updated in place and moved into order
 * rather than rebuilt, so polling doesn't flicker or drop a text selection.
 */
function syncRows(table, items, keyAttr, keyOf, build, update) {
    const tbody = $(`[data-table="${table}"] tbody`);
    const existing = new Map();
    for (const row of Array.from(tbody.rows)) {
        if (existing.has(row.dataset[keyAttr])) row.remove();
        else existing.set(row.dataset[keyAttr], row);
    }
    items.forEach((item, index) => {
        const key = String(keyOf(item));
        let row = existing.get(key);
        if (row) existing.delete(key);
        else {
            row = build();
            row.dataset[keyAttr] = key;
        }
        update(row, item);
        if (tbody.rows[index] !== row) tbody.insertBefore(row, tbody.rows[index] ?? null);
    });
    for (const row of existing.values()) row.remove();
    $(`[data-empty="${table}"]`).hidden = items.length > 0;
    // Headers over no rows only add noise: the empty-state line replaces the whole table.
    tbody.closest('.table-wrap').hidden = items.length === 0;
}

// --- rendering ---

function render(data) {
    lastData = data;
    renderHeader(data);
    renderTotals(data.totals);
    renderHistory(data.history);
    renderUpstreams(data.upstreams);
    renderPrompts(data.prompts);
    renderClients(data.clients);
    renderActivity(data.listChanged.recent);
    document.body.dataset.generatedAt = data.generatedAt;
    document.body.dataset.state = 'ready';
}

function renderHeader(data) {
    setText($('[data-field="version"]'), data.version ? `v${data.version}` : '');
    setText($('[data-field="uptime"]'), `up ${formatUptime(data.uptimeSeconds)}`);
    setText($('[data-field="last-updated"]'), `updated ${formatClock(data.generatedAt)}`);
}

function renderTotals(totals) {
    const sessions = Object.entries(totals.sessions || {});
    for (const node of document.querySelectorAll('[data-total]')) {
        const key = node.dataset.total;
        setText(node, formatCount(key === 'sessions' ? sessions.reduce((sum, [, n]) => sum + n, 0) : totals[key]));
    }
    const open = sessions.filter(([, n]) => n > 0);
    setText($('[data-field="sessions-breakdown"]'), open.map(([transport, n]) => `${transport} ${formatCount(n)}`).join(' · '));
    // Errors and rejections are worth a glance only when there are some.
    for (const tile of document.querySelectorAll('[data-alert]')) tile.classList.toggle('is-alert', totals[tile.dataset.alert] > 0);
}

/** Intervals of history the gateway keeps (DashboardFeed's default): the chart's full width. */
const HISTORY_SLOTS = 120;

/** Sparkline drawn in the SVG's own pixel size, so strokes and the end dot aren't stretched. */
function renderHistory(history) {
    const values = (history.promptGets || []).filter(isNumber);
    const interval = history.intervalSeconds;
    const svg = ui.chart;
    const width = Math.max(1, Math.round(svg.clientWidth));
    const height = Math.max(1, Math.round(svg.clientHeight));
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);

    const max = Math.max(0, ...values);
    const top = 6;
    const bottom = height - 2;
    const y = value => (max > 0 ? bottom - (value / max) * (bottom - top) : bottom);
    // The chart spans the whole window the gateway keeps; a young history fills it from the right.
    const slots = Math.max(values.length, HISTORY_SLOTS);
    const x = index => ((slots - values.length + index) / (slots - 1)) * width;
    const points = values.map((value, i) => [x(i), y(value)]);
    // The last value is the interval still running: its dashed segment doesn't read as a drop.
    const partial = values.length > 2 ? points.slice(-2) : [];
    const complete = partial.length ? points.slice(0, -1) : points;
    const coords = list => list.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`);
    const line = coords(complete);
    const end = complete.length ? complete[complete.length - 1][0].toFixed(1) : '0';
    const start = complete.length ? complete[0][0].toFixed(1) : '0';

    svg.querySelector('.spark-line').setAttribute('points', line.join(' '));
    svg.querySelector('.spark-partial').setAttribute('points', coords(partial).join(' '));
    svg.querySelector('.spark-area').setAttribute('d', line.length ? `M${start},${bottom} L${line.join(' L')} L${end},${bottom} Z` : '');
    const maxLine = svg.querySelector('.spark-max');
    for (const [name, value] of [
        ['x1', 0],
        ['x2', width],
        ['y1', top],
        ['y2', top]
    ])
        maxLine.setAttribute(name, String(value));
    maxLine.classList.toggle('is-hidden', max === 0);
    const last = points[points.length - 1] || [-10, -10];
    svg.querySelector('.spark-last').setAttribute('cx', last[0].toFixed(1));
    svg.querySelector('.spark-last').setAttribute('cy', last[1].toFixed(1));

    const caption = values.length ? `prompt gets per ${formatSpan(interval)}, last ${formatSpan(interval * values.length)}` : 'prompt gets: no history yet';
    setText($('[data-field="history-caption"]'), caption);
    setText($('[data-field="history-max"]'), `max ${formatCount(max)}`);
    svg.setAttribute('aria-label', `${caption}; max ${formatCount(max)}, latest ${formatCount(values[values.length - 1] ?? 0)}`);
}

const UPSTREAM_FIELDS = ['id', 'state', 'prompts', 'gets', 'errors', 'error-rate', 'input-rounds', 'reconnects', 'list-changed'];

/** The overrides that did not apply (docs/overrides.md), in one line; '' when all did. */
function describeOverrides(report) {
    if (!report) return '';
    const parts = [
        ...report.unmatched.map(name => `${name} (no such prompt)`),
        ...report.unknownArguments.map(name => `${name} (no such argument)`),
        ...report.clashes.map(clash => `${clash.prompt} → ${clash.name} (name taken)`)
    ];
    return parts.length === 0 ? '' : `overrides not applied: ${parts.join(', ')}`;
}

function buildUpstreamRow() {
    const row = buildRow(UPSTREAM_FIELDS, UPSTREAM_FIELDS.slice(2));
    const idCell = field(row, 'id');
    const lastError = element('div', 'last-error');
    lastError.dataset.field = 'last-error';
    const overrides = element('div', 'last-error');
    overrides.dataset.field = 'overrides';
    idCell.append(element('span', 'name'), lastError, overrides);
    field(row, 'state').append(element('span', 'pill'));
    return row;
}

function updateUpstreamRow(row, upstream) {
    setText(row.querySelector('.name'), upstream.id);
    const lastError = field(row, 'last-error');
    setText(lastError, upstream.lastError || '');
    lastError.title = upstream.lastError || '';
    lastError.hidden = !upstream.lastError;
    const overrides = field(row, 'overrides');
    const notApplied = describeOverrides(upstream.overrides);
    setText(overrides, notApplied);
    overrides.title = notApplied;
    overrides.hidden = notApplied === '';
    const pill = row.querySelector('.pill');
    setText(pill, upstream.state);
    pill.dataset.state = upstream.state;
    pill.title = upstream.up ? 'up' : 'not up';
    setText(field(row, 'prompts'), formatCount(upstream.prompts));
    setText(field(row, 'gets'), formatCount(upstream.gets));
    setText(field(row, 'errors'), formatCount(upstream.errors));
    const rate = field(row, 'error-rate');
    setText(rate, formatRate(upstream.errorRate));
    rate.classList.toggle('is-bad', upstream.errorRate >= 0.05);
    rate.classList.toggle('is-warn', upstream.errorRate > 0 && upstream.errorRate < 0.05);
    const rounds = field(row, 'input-rounds');
    setText(rounds, formatCount(upstream.inputRounds));
    rounds.title = Object.entries(upstream.inputRoundsByPath || {})
        .map(([path, n]) => `${path} ${formatCount(n)}`)
        .join(' · ');
    setText(field(row, 'reconnects'), formatCount(upstream.reconnects));
    setText(field(row, 'list-changed'), formatCount(upstream.listChangedReceived));
}

function renderUpstreams(upstreams) {
    syncRows('upstreams', upstreams, 'upstream', upstream => upstream.id, buildUpstreamRow, updateUpstreamRow);
    const up = upstreams.filter(upstream => upstream.up).length;
    setText($('[data-count="upstreams"]'), upstreams.length ? `${up} of ${upstreams.length} up` : '');
}

const PROMPT_FIELDS = ['prompt', 'upstream', 'gets', 'share', 'errors', 'p50', 'p95'];

function buildPromptRow() {
    const row = buildRow(PROMPT_FIELDS, ['gets', 'errors', 'p50', 'p95']);
    field(row, 'share').append(element('span', 'bar'));
    field(row, 'share').firstChild.append(element('span', 'bar-fill'));
    return row;
}

function renderPrompts(prompts) {
    const most = Math.max(1, ...prompts.map(prompt => prompt.gets));
    syncRows(
        'prompts',
        prompts,
        'prompt',
        prompt => prompt.prompt,
        buildPromptRow,
        (row, prompt) => {
            setText(field(row, 'prompt'), prompt.prompt);
            field(row, 'prompt').title = prompt.prompt;
            setText(field(row, 'upstream'), prompt.upstream);
            setText(field(row, 'gets'), formatCount(prompt.gets));
            setText(field(row, 'errors'), formatCount(prompt.errors));
            field(row, 'errors').classList.toggle('is-bad', prompt.errors > 0);
            setText(field(row, 'p50'), formatMs(prompt.p50Ms));
            setText(field(row, 'p95'), formatMs(prompt.p95Ms));
            // element.style is CSSOM, which the CSP's style-src allows (unlike a style="" attribute).
            row.querySelector('.bar-fill').style.width = `${((prompt.gets / most) * 100).toFixed(1)}%`;
        }
    );
}

function renderClients(clients) {
    const fields = ['client', 'gets', 'lists', 'errors'];
    syncRows(
        'clients',
        clients,
        'client',
        client => client.client,
        () => buildRow(fields, fields.slice(1)),
        (row, client) => {
            setText(field(row, 'client'), client.client);
            setText(field(row, 'gets'), formatCount(client.gets));
            setText(field(row, 'lists'), formatCount(client.lists));
            setText(field(row, 'errors'), formatCount(client.errors));
            field(row, 'errors').classList.toggle('is-bad', client.errors > 0);
        }
    );
}

function describeEvent(event) {
    if (event.kind === 'received') {
        const what = isNumber(event.count) && event.count > 1 ? `received ${formatCount(event.count)}` : 'received';
        return event.upstream ? `${what} from ${event.upstream}` : what;
    }
    if (!isNumber(event.sessions)) return 'sent';
    return `sent to ${formatCount(event.sessions)} ${event.sessions === 1 ? 'session' : 'sessions'}`;
}

/** At most 20 entries without stable keys: rebuilt, but only when they changed. */
function renderActivity(recent) {
    const key = JSON.stringify(recent);
    if (key === lastActivityKey) return;
    lastActivityKey = key;
    const items = recent.map(event => {
        const item = element('li');
        item.dataset.kind = event.kind;
        const time = element('time', 'activity-time', formatClock(event.at));
        time.dateTime = event.at;
        // The arrow is drawn by CSS, so the text reads "12:00:01 received from docs".
        item.append(time, ' ', element('span', 'activity-text', describeEvent(event)));
        return item;
    });
    const list = $('[data-list="list-changed"]');
    list.replaceChildren(...items);
    list.hidden = items.length === 0;
    $('[data-empty="list-changed"]').hidden = items.length > 0;
}

// --- connection state ---

function setConnection(state, message) {
    document.body.dataset.connection = state;
    setText(ui.liveLabel, { live: 'live', disconnected: 'offline', auth: 'locked' }[state] || state);
    ui.banner.hidden = state !== 'disconnected';
    if (message) setText(ui.bannerText, message);
}

// sessionStorage can throw (storage disabled, sandboxed frame): the token then lives in memory only.
function loadToken() {
    try {
        return sessionStorage.getItem(TOKEN_KEY);
    } catch {
        return null;
    }
}

function storeToken(value) {
    try {
        if (value === null) sessionStorage.removeItem(TOKEN_KEY);
        else sessionStorage.setItem(TOKEN_KEY, value);
    } catch {
        // memory only
    }
}

function showAuth(message, isError) {
    setText(ui.authMessage, message);
    ui.authMessage.classList.toggle('is-bad', isError);
    ui.auth.hidden = false;
    ui.main.hidden = true;
    if (document.body.dataset.state !== 'ready') setText($('[data-field="last-updated"]'), '');
    setConnection('auth');
    ui.tokenInput.value = '';
    ui.tokenInput.focus();
}

/** A 401 with a token means that token is wrong (or was rotated): forget it and ask again. */
function onUnauthorized() {
    const rejected = token !== null;
    token = null;
    storeToken(null);
    showAuth(rejected ? 'That token was not accepted. Check metrics.bearerToken and try again.' : 'This dashboard is protected by the metrics bearer token.', rejected);
}

ui.auth.addEventListener('submit', event => {
    event.preventDefault();
    const value = ui.tokenInput.value.trim();
    if (!value) return;
    try {
        new Headers({ Authorization: `Bearer ${value}` });
    } catch {
        // Otherwise every later fetch would throw, looking like a network error.
        showAuth('That token contains characters an HTTP header cannot carry.', true);
        return;
    }
    token = value;
    storeToken(value);
    ui.auth.hidden = true;
    ui.main.hidden = false;
    void poll();
});

// --- polling ---

/**
 * One request, then the next is scheduled, so requests never overlap even when slow. A token
 * entered mid-request starts a new poll: the older one's answer is then dropped (`pollGeneration`).
 */
async function poll() {
    const current = ++pollGeneration;
    clearTimeout(pollTimer);
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), FETCH_TIMEOUT_MS);
    try {
        const headers = new Headers({ Accept: 'application/json' });
        if (token) headers.set('Authorization', `Bearer ${token}`);
        const response = await fetch(dataUrl, { cache: 'no-store', credentials: 'same-origin', headers, signal: controller.signal });
        const data = response.ok ? await response.json() : undefined;
        if (current !== pollGeneration) return;
        // Polling pauses until a token is entered: without one every request would be refused.
        if (response.status === 401) return onUnauthorized();
        if (response.ok) {
            render(data);
            setConnection('live');
        } else {
            setConnection('disconnected', `The gateway answered HTTP ${response.status}, retrying…`);
        }
    } catch (error) {
        if (current !== pollGeneration) return;
        // The last numbers stay on screen; the banner says they are getting old.
        console.warn('dashboard: poll failed', error);
        setConnection('disconnected', 'Disconnected, retrying…');
    } finally {
        clearTimeout(timeout);
    }
    pollTimer = setTimeout(poll, POLL_INTERVAL_MS);
}

// The chart is drawn in pixels: redraw it when its size changes, at most once per frame.
let resizeFrame = 0;
window.addEventListener('resize', () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(() => lastData && renderHistory(lastData.history));
});

void poll();
