// @ts-nocheck -- browser code: the project's typecheck has Node's types only, no DOM lib.
/**
 * The prompt catalog page: every prompt the visitor may use, searchable, with a form to try each one, kept current.
 *
 * The page holds no data of its own: it is an MCP client of the gateway's endpoint (mcp-client.js), so the gateway
 * applies auth, allow-lists and rate limits to it as to any client. Served under a strict CSP with Trusted Types (no
 * inline script or style, no HTML sinks): text from the gateway reaches the page through textContent and attributes
 * only. The credential, when the gateway wants one, lives in this tab's sessionStorage and goes out only in the
 * Authorization header of the page's own requests; the selected prompt lives in the URL's fragment, which is never
 * sent to a server.
 */
import { coalesced, whileLiveOff } from './coalesce.js';
import { DEFAULT_MAX_RESPONSE_BYTES, createCatalogClient, isAbort } from './mcp-client.js';
import {
    CLAUDE_CODE_CAVEAT,
    claudeCodeCommand,
    countText,
    describeChanges,
    diffPrompts,
    inspectorCommand,
    matchesTerms,
    resultText,
    searchTerms,
    searchText,
    upstreamOf,
    valueOf,
    vscodeCommand
} from './copy-text.js';
import { element, fieldElement, renderMessages } from './render.js';

const CREDENTIAL_KEY = 'mcp-prompt-gateway.catalog-credential';
/** Rows rendered at most: past this a search narrows the list faster than scrolling would. */
const MAX_ROWS = 500;
const COMPLETION_DEBOUNCE_MS = 200;
const MAX_COMPLETIONS = 100;
const MAX_CHANGES_SHOWN = 20;
/** The least time between two walks of the list (each is a request per page, counted by the rate limit). */
const MIN_WALK_GAP_MS = 1000;
/** Without live updates (refused or unavailable), the list is walked again this often at least. */
const FALLBACK_REFRESH_MIN_MS = 30_000;
const NARROW = '(max-width: 719px)';
const NO_PREFIX_LABEL = '(no prefix)';

const $ = selector => document.querySelector(selector);
const meta = name => $(`meta[name="${name}"]`)?.content ?? '';

const config = {
    endpoint: meta('catalog-endpoint') || '/mcp',
    auth: ['apiKey', 'jwt'].includes(meta('catalog-auth')) ? meta('catalog-auth') : 'none',
    separator: meta('catalog-separator'),
    serverName: meta('catalog-server-name') || 'prompts',
    version: meta('gateway-version'),
    maxResponseBytes: Number.parseInt(meta('catalog-max-response-bytes'), 10)
};
// The upstream filter's value for names without a prefix: the separator itself, which no prefix can contain.
const NO_PREFIX = config.separator || '\u0000';

const ui = {
    auth: $('[data-view="auth"]'),
    authMessage: $('[data-field="auth-message"]'),
    credentialInput: $('#catalog-credential'),
    credentialLabel: $('[data-field="credential-label"]'),
    forget: $('[data-action="forget-credential"]'),
    main: $('[data-view="main"]'),
    liveLabel: $('[data-field="live-label"]'),
    pageError: $('[data-field="page-error"]'),
    pageErrorActions: $('[data-field="page-error-actions"]'),
    search: $('#catalog-search'),
    upstream: $('#catalog-upstream'),
    count: $('[data-field="count"]'),
    listNotice: $('[data-field="list-notice"]'),
    list: $('[data-list="prompts"]'),
    more: $('[data-field="more"]'),
    empty: $('[data-empty="prompts"]'),
    noSelection: $('[data-field="no-selection"]'),
    prompt: $('[data-view="prompt"]'),
    heading: $('[data-field="prompt-heading"]'),
    promptName: $('[data-field="prompt-name"]'),
    promptUpstream: $('[data-field="prompt-upstream"]'),
    promptDescription: $('[data-field="prompt-description"]'),
    promptNotice: $('[data-field="prompt-notice"]'),
    form: $('[data-form="arguments"]'),
    fields: $('[data-field="fields"]'),
    noArguments: $('[data-field="no-arguments"]'),
    completionStatus: $('[data-field="completion-status"]'),
    renderHint: $('[data-field="render-hint"]'),
    renderStatus: $('[data-field="render-status"]'),
    renderError: $('[data-field="render-error"]'),
    copyText: $('[data-copy="text"]'),
    copyStatus: $('[data-field="copy-status"]'),
    result: $('[data-view="result"]'),
    resultDescription: $('[data-field="result-description"]'),
    messages: $('[data-list="messages"]'),
    announcement: $('[data-field="live-announcement"]'),
    noChanges: $('[data-field="no-changes"]'),
    changes: $('[data-list="changes"]')
};

const state = {
    credential: loadCredential(),
    prompts: [],
    /** Each listed prompt's searchText, by index: made once per list. */
    searchTexts: [],
    loaded: false,
    completions: false,
    ttlMs: undefined,
    /**
     * The open prompt: its exposed name, its definition as last listed (none if never), and whether the list holds it
     * ('listed'), never did ('unlisted': opened by its name) or did when it was opened ('gone').
     */
    selected: undefined,
    selectedPrompt: undefined,
    selectedStatus: undefined,
    /** The argument definitions the open form was built from (JSON), so a refresh rebuilds it only when they change. */
    formKey: undefined,
    lastResult: undefined,
    /** The current connection: its controller aborts everything of it (list walks, the listen stream). */
    session: undefined,
    renderController: undefined,
    retryTimer: undefined
};

/**
 * The endpoint on this page's origin, whatever its path holds: a path is appended, never resolved (resolving
 * `//host/mcp` would name another host).
 */
const endpointUrl = `${location.origin}${config.endpoint.startsWith('/') ? '' : '/'}${config.endpoint}`;

const client = createCatalogClient({
    endpoint: endpointUrl,
    clientVersion: config.version,
    // The gateway's own bound on what it sends (a list page, a result), never below the client's default.
    maxResponseBytes: Math.max(DEFAULT_MAX_RESPONSE_BYTES, Number.isSafeInteger(config.maxResponseBytes) ? config.maxResponseBytes : 0),
    credential: () => state.credential ?? undefined
});

// --- small DOM helpers ---

function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
}

const seconds = ms => Math.max(1, Math.ceil(ms / 1000));
const upstreamKey = name => upstreamOf(name, config.separator) ?? NO_PREFIX;
const upstreamLabel = name => upstreamOf(name, config.separator) ?? NO_PREFIX_LABEL;

// --- the credential ---

// sessionStorage can throw (storage disabled, sandboxed frame): the credential then lives in memory only.
function loadCredential() {
    try {
        return sessionStorage.getItem(CREDENTIAL_KEY) || undefined;
    } catch {
        return undefined;
    }
}

function storeCredential(value) {
    try {
        if (value === undefined) sessionStorage.removeItem(CREDENTIAL_KEY);
        else sessionStorage.setItem(CREDENTIAL_KEY, value);
    } catch {
        // memory only
    }
}

const credentialName = () => (config.auth === 'jwt' ? 'Bearer token' : 'API key');
const credentialNoun = () => (config.auth === 'jwt' ? 'token' : 'key');

function showAuth(message, isError) {
    stopSession();
    clearData();
    document.body.dataset.state = 'auth';
    setLive('off');
    hidePageError();
    setText(ui.credentialLabel, credentialName());
    setText(ui.authMessage, message);
    ui.authMessage.classList.toggle('is-bad', isError);
    ui.auth.hidden = false;
    ui.main.hidden = true;
    ui.forget.hidden = true;
    ui.credentialInput.value = '';
    ui.credentialInput.focus();
}

/** A 401: a held credential was refused (or rotated) and is forgotten; without one, the gateway asks for one. */
function onUnauthorized() {
    const rejected = state.credential !== undefined;
    state.credential = undefined;
    storeCredential(undefined);
    showAuth(rejected ? `That ${credentialNoun()} was not accepted. Check it and try again.` : `This gateway asks for a credential: your ${credentialName()}.`, rejected);
}

ui.auth.addEventListener('submit', event => {
    event.preventDefault();
    const value = ui.credentialInput.value.trim();
    if (value === '') {
        setText(ui.authMessage, `Enter your ${credentialName()}.`);
        return ui.credentialInput.focus();
    }
    try {
        new Headers({ Authorization: `Bearer ${value}` });
    } catch {
        // Otherwise every request would throw, looking like a network error.
        setText(ui.authMessage, `That ${credentialName()} holds characters an HTTP header cannot carry.`);
        return ui.credentialInput.focus();
    }
    state.credential = value;
    storeCredential(value);
    ui.credentialInput.value = '';
    void connect({ focusSearch: true });
});

ui.forget.addEventListener('click', () => {
    state.credential = undefined;
    storeCredential(undefined);
    showAuth(`${credentialName()} forgotten.`, false);
});

// --- page state ---

const LIVE_LABELS = { connecting: 'connecting', listening: 'live', reconnecting: 'reconnecting', off: 'live updates off' };

function setLive(live, reason) {
    document.body.dataset.live = live;
    setText(ui.liveLabel, LIVE_LABELS[live] ?? live);
    ui.liveLabel.parentElement.title = reason ?? '';
}

function showPageError(message, retry) {
    setText(ui.pageError, message);
    ui.pageErrorActions.hidden = !retry;
}

// The alert and status regions stay in the page, empty when there is nothing to say: screen readers announce a
// change of text in a region they already know, not reliably one that appears.
function hidePageError() {
    ui.pageErrorActions.hidden = true;
    setText(ui.pageError, '');
}

function stopSession() {
    state.session?.controller.abort();
    state.session?.liveFallback('stopped');
    state.session = undefined;
    clearTimeout(state.retryTimer);
}

/** Nothing of one credential's view stays on screen after it is forgotten or refused. */
function clearData() {
    state.prompts = [];
    state.searchTexts = [];
    state.loaded = false;
    rowCache.clear();
    renderUpstreamOptions();
    renderList();
    closePrompt();
    ui.changes.replaceChildren();
    setText(ui.announcement, '');
    ui.noChanges.hidden = false;
}

/** Sentence for an error of a list walk or the connection. */
function pageErrorMessage(error) {
    if (error?.kind === 'rate-limited' && error.retryAfterMs !== undefined) return `Too many requests; retrying in ${seconds(error.retryAfterMs)} s`;
    if (error?.kind === 'network' || error?.kind === 'unavailable') return `The gateway did not answer: ${error.message}`;
    if (error?.kind === 'rpc' && error.code === -32601) return 'This gateway does not serve MCP 2026-07-28, which this page speaks.';
    // Only the gateway's and the client's own sentences are shown: a fault of the page itself goes to the console.
    return (error?.kind && error.message) || 'Something went wrong loading the prompts.';
}

/**
 * A failed walk or connection: 401 asks for a credential; 429 retries after Retry-After; anything else is shown with
 * a retry button.
 */
function onPageError(error, retry) {
    if (error?.kind === 'unauthorized') return onUnauthorized();
    if (!error?.kind) console.warn('catalog:', error);
    // Whatever failed before the page was ready (a walk, or showing what it read), it is not loading any more.
    if (document.body.dataset.state !== 'ready') document.body.dataset.state = 'error';
    const automatic = error?.kind === 'rate-limited' && error.retryAfterMs !== undefined;
    showPageError(pageErrorMessage(error), !automatic);
    if (automatic) {
        clearTimeout(state.retryTimer);
        state.retryTimer = setTimeout(retry, error.retryAfterMs);
    }
}

// --- connecting and walking the list ---

/** Discovery, the list, then the live stream; everything of an older connection is dropped first. */
async function connect({ focusSearch = false } = {}) {
    stopSession();
    const controller = new AbortController();
    const session = { controller, signal: controller.signal, walk: undefined };
    session.liveFallback = whileLiveOff(
        () => refreshInBackground(session),
        () => Math.max(state.ttlMs ?? 0, FALLBACK_REFRESH_MIN_MS)
    );
    state.session = session;
    document.body.dataset.state = 'loading';
    ui.auth.hidden = true;
    ui.main.hidden = false;
    ui.forget.hidden = state.credential === undefined;
    setLive('connecting');
    try {
        const discovered = await client.discover({ signal: session.signal });
        state.completions = discovered?.capabilities?.completions !== undefined;
        await refresh(session);
        if (session.signal.aborted) return;
        hidePageError();
        document.body.dataset.state = 'ready';
        openFromHash({ focus: false });
        if (focusSearch) ui.search.focus();
        listen(session);
    } catch (error) {
        if (session.signal.aborted || isAbort(error)) return;
        setLive('off');
        onPageError(error, () => void connect());
    }
}

/**
 * Walks the list and shows it. One walk at a time per connection, a second apart at least: changes announced during a
 * walk or the second after it queue exactly one more, which starts from the first page (the older walk's cursors may
 * be refused once the list changed). A storm of announcements so costs a walk a second, not the rate limit.
 */
function refresh(session) {
    session.walk ??= coalesced(
        async () => {
            const list = await client.listPrompts({ signal: session.signal });
            if (!session.signal.aborted) applyList(list);
        },
        { minGapMs: MIN_WALK_GAP_MS, signal: session.signal }
    );
    return session.walk();
}

/** A refresh the live stream or the fallback timer asked for: its failure is shown, the page stays usable. */
function refreshInBackground(session) {
    refresh(session).then(
        () => hidePageError(),
        error => {
            if (!session.signal.aborted && !isAbort(error)) onPageError(error, () => refreshInBackground(session));
        }
    );
}

function applyList({ prompts, truncated, ttlMs }) {
    const changes = state.loaded ? diffPrompts(state.prompts, prompts) : undefined;
    state.prompts = prompts;
    state.searchTexts = prompts.map(searchText);
    state.loaded = true;
    state.ttlMs = ttlMs;
    ui.listNotice.hidden = !truncated;
    setText(ui.listNotice, truncated ? 'The list is longer than this page reads: only its start is shown.' : '');
    renderUpstreamOptions();
    renderList();
    refreshOpenPrompt();
    const sentence = changes && describeChanges(changes);
    if (sentence) announce(sentence);
}

function listen(session) {
    const listening = client.listen({
        signal: session.signal,
        onAcknowledged: () => refreshInBackground(session),
        onListChanged: () => refreshInBackground(session),
        onState: (live, error) => onLiveState(session, live, error)
    });
    listening.catch(error => {
        if (!session.signal.aborted) console.warn('catalog: live updates stopped', error);
    });
}

/** Live updates off (refused, or not offered): the list is walked on a timer until they come back. */
function onLiveState(session, live, error) {
    if (session.signal.aborted) return;
    if (error?.kind === 'unauthorized') return onUnauthorized();
    const reason = error === undefined ? undefined : error.kind === 'rate-limited' ? pageErrorMessage(error) : error.message;
    setLive(live, reason);
    session.liveFallback(live);
}

// A closed tab frees its listen slot at once (the gateway counts them per client); a page restored from the
// back-forward cache connects again.
window.addEventListener('pagehide', () => stopSession());
window.addEventListener('pageshow', event => {
    if (event.persisted && document.body.dataset.state !== 'auth') void connect();
});

$('[data-action="retry"]').addEventListener('click', () => void connect());

// --- announcements ---

const pad = value => String(value).padStart(2, '0');

function announce(sentence) {
    setText(ui.announcement, sentence);
    ui.noChanges.hidden = true;
    const now = new Date();
    const time = element('time', 'change-time', `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}`);
    time.dateTime = now.toISOString();
    const item = element('li');
    item.append(time, ' ', element('span', 'change-text', sentence));
    ui.changes.prepend(item);
    while (ui.changes.children.length > MAX_CHANGES_SHOWN) ui.changes.lastElementChild.remove();
}

// --- the list ---

function renderUpstreamOptions() {
    const counts = new Map();
    for (const prompt of state.prompts) {
        const key = upstreamKey(prompt.name);
        const entry = counts.get(key) ?? { label: upstreamLabel(prompt.name), count: 0 };
        entry.count++;
        counts.set(key, entry);
    }
    const chosen = ui.upstream.value;
    const options = [option('All upstreams', '')];
    for (const [key, { label, count }] of counts) options.push(option(`${label} (${count})`, key));
    ui.upstream.replaceChildren(...options);
    ui.upstream.value = counts.has(chosen) ? chosen : '';
}

function option(text, value) {
    const node = element('option', '', text);
    node.value = value;
    return node;
}

/** Rows by exposed name, reused while the prompt's definition is the same (a refresh keeps focus and selection). */
const rowCache = new Map();

function rowFor(prompt) {
    const key = JSON.stringify(prompt);
    const cached = rowCache.get(prompt.name);
    if (cached?.key === key) return cached.row;
    const row = buildRow(prompt);
    rowCache.set(prompt.name, { key, row });
    return row;
}

function buildRow(prompt) {
    const row = element('li', 'prompt-row');
    row.dataset.prompt = prompt.name;
    const title = typeof prompt.title === 'string' ? prompt.title : '';
    const open = element('button', 'open');
    open.type = 'button';
    open.dataset.action = 'open';
    open.setAttribute('aria-label', title || prompt.name);
    const titleNode = fieldElement('span', 'title', title, 'row-title');
    titleNode.hidden = title === '';
    open.append(titleNode, fieldElement('code', 'name', prompt.name, 'row-name'));
    const description = typeof prompt.description === 'string' ? prompt.description : '';
    const descriptionNode = fieldElement('p', 'description', description, 'row-description');
    descriptionNode.hidden = description === '';
    row.append(open, fieldElement('span', 'upstream', upstreamLabel(prompt.name), 'upstream-tag'), descriptionNode, argumentList(prompt));
    return row;
}

function argumentList(prompt) {
    const list = element('ul', 'row-arguments');
    list.dataset.field = 'arguments';
    for (const argument of argumentsOf(prompt)) {
        const item = element('li');
        item.dataset.argument = argument.name;
        item.append(fieldElement('code', 'argument-name', argument.name));
        if (argument.required === true) item.append(' ', fieldElement('span', 'required', 'required', 'required-tag'));
        if (typeof argument.description === 'string' && argument.description !== '') {
            item.append(' ', fieldElement('span', 'argument-description', argument.description, 'argument-description'));
        }
        list.append(item);
    }
    list.hidden = list.children.length === 0;
    return list;
}

function argumentsOf(prompt) {
    return Array.isArray(prompt?.arguments) ? prompt.arguments.filter(argument => typeof argument?.name === 'string') : [];
}

function renderList() {
    const query = ui.search.value;
    const terms = searchTerms(query);
    const upstream = ui.upstream.value;
    const matching = state.prompts.filter((prompt, index) => (upstream === '' || upstreamKey(prompt.name) === upstream) && matchesTerms(state.searchTexts[index], terms));
    const filtered = query.trim() !== '' || upstream !== '';
    setText(ui.count, state.loaded ? countText(matching.length, state.prompts.length, filtered) : '');

    const known = new Set(state.prompts.map(prompt => prompt.name));
    for (const name of rowCache.keys()) if (!known.has(name)) rowCache.delete(name);
    const rows = matching.slice(0, MAX_ROWS).map(rowFor);
    // In place: rows that stay are not moved, so a focused button keeps its focus.
    rows.forEach((row, index) => {
        if (ui.list.children[index] !== row) ui.list.insertBefore(row, ui.list.children[index] ?? null);
        markSelected(row);
    });
    while (ui.list.children.length > rows.length) ui.list.lastElementChild.remove();

    const hiddenRows = matching.length - rows.length;
    ui.more.hidden = hiddenRows <= 0;
    setText(ui.more, hiddenRows > 0 ? `${hiddenRows} more: refine the search` : '');
    ui.empty.hidden = !state.loaded || matching.length > 0;
}

function markSelected(row) {
    const selected = row.dataset.prompt === state.selected;
    row.classList.toggle('is-selected', selected);
    const open = row.querySelector('[data-action="open"]');
    if (selected) open.setAttribute('aria-current', 'true');
    else open.removeAttribute('aria-current');
}

ui.search.addEventListener('input', () => renderList());
ui.upstream.addEventListener('change', () => renderList());

ui.list.addEventListener('click', event => {
    const open = event.target.closest('[data-action="open"]');
    const row = open?.closest('[data-prompt]');
    if (row) openPrompt(row.dataset.prompt, { focus: true, remember: true });
});

// --- the open prompt ---

function hashPrompt() {
    const match = /^#prompt=(.*)$/s.exec(location.hash);
    if (!match) return undefined;
    try {
        return decodeURIComponent(match[1]);
    } catch {
        return undefined;
    }
}

function openFromHash({ focus }) {
    const name = hashPrompt();
    if (name === undefined) return closePrompt();
    if (name !== state.selected) openPrompt(name, { focus, remember: false });
}

window.addEventListener('hashchange', () => {
    if (state.loaded) openFromHash({ focus: true });
});

/**
 * Shows a prompt's details and form. A name the list does not hold still gets a form (no arguments): Render then asks
 * the gateway, which answers as it answers any client, so a hidden prompt looks exactly like a missing one.
 */
function openPrompt(name, { focus, remember }) {
    if (remember) {
        const hash = `#prompt=${encodeURIComponent(name)}`;
        if (location.hash !== hash) history.pushState(null, '', hash);
    }
    if (name !== state.selected) {
        state.selected = name;
        state.selectedPrompt = undefined;
        state.selectedStatus = undefined;
        state.formKey = undefined;
        clearResult();
    }
    refreshOpenPrompt();
    for (const row of ui.list.children) markSelected(row);
    if (focus) {
        ui.heading.focus();
        // One column: the prompt sits below the list.
        if (window.matchMedia(NARROW).matches) ui.heading.scrollIntoView({ block: 'start' });
    }
}

function closePrompt() {
    state.selected = undefined;
    state.selectedPrompt = undefined;
    state.selectedStatus = undefined;
    state.formKey = undefined;
    ui.prompt.hidden = true;
    ui.noSelection.hidden = false;
    clearResult();
    for (const row of ui.list.children) markSelected(row);
}

const PROMPT_NOTICES = {
    listed: '',
    unlisted: 'This prompt is not in your list; Render asks the gateway for it.',
    gone: 'This prompt is no longer available to you'
};

/**
 * The open prompt's view, from the current list: updated in place when it changed. One that went away keeps its last
 * definition and its form (what was typed stays; Render shows the gateway's answer), under a notice.
 */
function refreshOpenPrompt() {
    const name = state.selected;
    if (name === undefined) return;
    const listed = state.prompts.find(prompt => prompt.name === name);
    if (listed) state.selectedPrompt = listed;
    state.selectedStatus = listed ? 'listed' : state.selectedStatus === undefined ? 'unlisted' : state.selectedStatus === 'listed' ? 'gone' : state.selectedStatus;
    const prompt = state.selectedPrompt ?? { name, arguments: [] };
    ui.prompt.hidden = false;
    ui.noSelection.hidden = true;
    ui.prompt.dataset.prompt = name;
    const title = typeof prompt.title === 'string' && prompt.title !== '' ? prompt.title : name;
    setText(ui.heading, title);
    setText(ui.promptName, name);
    setText(ui.promptUpstream, upstreamLabel(name));
    const description = typeof prompt.description === 'string' ? prompt.description : '';
    setText(ui.promptDescription, description);
    ui.promptDescription.hidden = description === '';
    setText(ui.promptNotice, PROMPT_NOTICES[state.selectedStatus]);
    buildForm(prompt);
}

function buildForm(prompt) {
    const declared = argumentsOf(prompt);
    const key = JSON.stringify([declared, state.completions]);
    if (key === state.formKey) return;
    state.formKey = key;
    const previous = formValues();
    const fields = declared.map((argument, index) => buildField(argument, index, valueOf(previous, argument.name)));
    ui.fields.replaceChildren(...fields);
    for (const field of ui.fields.querySelectorAll('textarea[name]')) fitHeight(field);
    ui.noArguments.hidden = declared.length > 0 || state.selectedStatus === 'unlisted';
    ui.renderHint.hidden = declared.length === 0;
    setText(ui.completionStatus, '');
}

function buildField(argument, index, value) {
    const id = `arg-${index}`;
    const wrapper = element('div', 'field');
    const label = element('label');
    label.htmlFor = id;
    label.append(argument.name);
    // A textarea, not an input: the values people paste (a diff, notes, a changelog) are lines, which an input drops.
    const field = element('textarea', 'argument');
    field.id = id;
    field.name = argument.name;
    field.rows = 1;
    field.autocomplete = 'off';
    field.spellcheck = false;
    field.value = value;
    field.addEventListener('input', () => fitHeight(field));
    if (argument.required === true) {
        label.append(' ', element('span', 'required-mark', '(required)'));
        field.setAttribute('aria-required', 'true');
    }
    wrapper.append(label);
    if (typeof argument.description === 'string' && argument.description !== '') {
        const hint = element('p', 'hint', argument.description);
        hint.id = `${id}-hint`;
        field.setAttribute('aria-describedby', hint.id);
        wrapper.append(hint);
    }
    const box = element('div', 'combo');
    box.append(field);
    if (state.completions) box.append(new Completions(field, id, argument.name).listbox);
    wrapper.append(box);
    return wrapper;
}

const SIZES_TO_CONTENT = globalThis.CSS?.supports?.('field-sizing', 'content') === true;

/**
 * Where the browser cannot size a field to its content (field-sizing), its height follows its lines here; the style
 * sheet's max-height caps it, past which it scrolls.
 */
function fitHeight(field) {
    if (SIZES_TO_CONTENT || !field.isConnected) return;
    field.style.height = 'auto';
    field.style.height = `${field.scrollHeight + field.offsetHeight - field.clientHeight}px`;
}

/** Ctrl+Enter (Cmd+Enter on a Mac) in a field renders; Enter alone is a new line. */
function onFieldKey(event) {
    if (event.key !== 'Enter' || event.isComposing || !(event.ctrlKey || event.metaKey) || !event.target.matches?.('textarea[name]')) return;
    event.preventDefault();
    ui.form.requestSubmit();
}

ui.form.addEventListener('keydown', onFieldKey);

/**
 * The form's values by argument name (what is typed, empty included). No prototype: the names come from upstreams, and
 * one named `__proto__` or `constructor` is a key like any other.
 */
function formValues() {
    const values = Object.create(null);
    for (const field of ui.fields.querySelectorAll('textarea[name]')) values[field.name] = field.value;
    return values;
}

// --- completions ---

/**
 * One field's completions: asked for as the user types (debounced, the previous request aborted), picked by key or
 * click. The field is a textarea, whose role (textbox) takes aria-autocomplete, aria-controls and
 * aria-activedescendant but not the combobox role: it keeps focus, the listbox follows, and whether the listbox is
 * open is its hidden attribute (and a sentence in the completion status).
 */
class Completions {
    #timer;
    #controller;
    #active = -1;

    constructor(field, id, argumentName) {
        this.field = field;
        this.id = id;
        this.argumentName = argumentName;
        this.listbox = element('ul', 'completions');
        this.listbox.id = `${id}-options`;
        this.listbox.setAttribute('role', 'listbox');
        // Not labelled by the field's label: that name belongs to the field alone (getByLabel, screen readers' field lists).
        this.listbox.setAttribute('aria-label', 'Suggestions');
        this.listbox.dataset.completionsFor = argumentName;
        this.listbox.hidden = true;
        field.setAttribute('aria-autocomplete', 'list');
        field.setAttribute('aria-controls', this.listbox.id);
        field.addEventListener('input', () => {
            clearTimeout(this.#timer);
            this.#timer = setTimeout(() => void this.#request(), COMPLETION_DEBOUNCE_MS);
        });
        field.addEventListener('keydown', event => (this.#open ? this.#onOpenKey(event) : this.#onClosedKey(event)));
        field.addEventListener('blur', () => this.#close());
        // The field keeps focus while an option is clicked.
        this.listbox.addEventListener('mousedown', event => event.preventDefault());
        this.listbox.addEventListener('click', event => {
            const option = event.target.closest('[role="option"]');
            if (option) this.#pick(Number(option.dataset.index));
        });
    }

    get #open() {
        return !this.listbox.hidden;
    }

    /** The listbox open: arrows move through it, Enter and Tab pick, Escape closes; Ctrl+Enter still renders. */
    #onOpenKey(event) {
        if (event.isComposing) return;
        if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) return this.#close();
        if (event.altKey || event.ctrlKey || event.metaKey) return;
        if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
            event.preventDefault();
            this.#activate(event.key === 'ArrowDown' ? this.#active + 1 : this.#active < 0 ? -1 : this.#active - 1);
        } else if (event.key === 'Enter') {
            // Picks the active option, else only closes the list: a new line is the next Enter's.
            event.preventDefault();
            if (this.#active >= 0) this.#pick(this.#active);
            else this.#close();
        } else if (event.key === 'Tab' && this.#active >= 0) {
            this.#pick(this.#active);
        } else if (event.key === 'Escape') {
            event.preventDefault();
            this.#close();
        }
    }

    /** The listbox closed: ArrowDown on the field's last line asks for suggestions; elsewhere it moves the caret. */
    #onClosedKey(event) {
        if (event.key !== 'ArrowDown' || event.isComposing || event.ctrlKey || event.metaKey || event.shiftKey) return;
        if (this.field.value.includes('\n', this.field.selectionEnd)) return;
        event.preventDefault();
        void this.#request();
    }

    async #request() {
        this.#controller?.abort();
        const controller = new AbortController();
        this.#controller = controller;
        const others = Object.fromEntries(Object.entries(formValues()).filter(([name, value]) => name !== this.argumentName && value !== ''));
        try {
            const completion = await client.complete({
                prompt: state.selected,
                argument: this.argumentName,
                value: this.field.value,
                context: others,
                signal: controller.signal
            });
            if (controller.signal.aborted || document.activeElement !== this.field) return;
            const values = completion.values.slice(0, MAX_COMPLETIONS);
            // A value typed whole has nothing left to complete: no list opens over the form (or its Render button).
            this.#show(values.length === 1 && values[0] === this.field.value ? [] : values);
        } catch (error) {
            if (controller.signal.aborted || isAbort(error)) return;
            // Silent in the form (typing goes on), said to screen readers and kept for whoever looks.
            setText(ui.completionStatus, `No suggestions for ${this.argumentName}: ${error?.message ?? 'the request failed'}`);
            this.#show([]);
        }
    }

    #show(values) {
        const options = values.map((value, index) => {
            const option = element('li', 'option', value);
            option.id = `${this.id}-option-${index}`;
            option.setAttribute('role', 'option');
            option.setAttribute('aria-selected', 'false');
            option.dataset.value = value;
            option.dataset.index = String(index);
            return option;
        });
        this.listbox.replaceChildren(...options);
        this.#active = -1;
        this.field.removeAttribute('aria-activedescendant');
        this.listbox.hidden = options.length === 0;
        if (options.length > 0) setText(ui.completionStatus, `${options.length} ${options.length === 1 ? 'suggestion' : 'suggestions'} for ${this.argumentName}`);
    }

    #activate(index) {
        const options = Array.from(this.listbox.children);
        if (options.length === 0) return;
        this.#active = (index + options.length) % options.length;
        options.forEach((option, i) => option.setAttribute('aria-selected', String(i === this.#active)));
        this.field.setAttribute('aria-activedescendant', options[this.#active].id);
        options[this.#active].scrollIntoView({ block: 'nearest' });
    }

    #pick(index) {
        const option = this.listbox.children[index];
        if (option) {
            this.field.value = option.dataset.value;
            fitHeight(this.field);
        }
        this.#close();
    }

    #close() {
        this.#controller?.abort();
        clearTimeout(this.#timer);
        this.#show([]);
    }
}

// --- render ---

function clearResult() {
    state.renderController?.abort();
    state.lastResult = undefined;
    ui.result.hidden = true;
    ui.messages.replaceChildren();
    setText(ui.resultDescription, '');
    setText(ui.renderError, '');
    setText(ui.renderStatus, '');
    ui.copyStatus.replaceChildren();
    ui.copyText.disabled = true;
}

/** The sentence shown for a failed render: the gateway's own message where it has one. */
function renderErrorMessage(error) {
    if (error?.kind === 'rate-limited') {
        return error.retryAfterMs === undefined ? 'Too many requests; try again later' : `Too many requests; try again in ${seconds(error.retryAfterMs)} s`;
    }
    if (error?.kind === 'rpc' && error.code === -32021) {
        const needs = Array.isArray(error.data?.requiredCapabilities) ? error.data.requiredCapabilities.filter(name => typeof name === 'string') : [];
        const what = needs.length > 0 ? needs.join(', ') : 'a capability';
        return `This prompt needs a client that supports ${what}, which the catalog cannot offer; use it from an MCP client. (${error.message})`;
    }
    return (error?.kind && error.message) || 'The prompt could not be rendered.';
}

async function render() {
    const name = state.selected;
    if (name === undefined) return;
    state.renderController?.abort();
    const controller = new AbortController();
    state.renderController = controller;
    // Empty fields are left out, so a missing required argument is named by the gateway's own message.
    const args = Object.fromEntries(Object.entries(formValues()).filter(([, value]) => value !== ''));
    setText(ui.renderError, '');
    setText(ui.renderStatus, 'Rendering…');
    try {
        const result = await client.getPrompt({ name, arguments: args, signal: controller.signal });
        if (controller.signal.aborted) return;
        showResult(result);
    } catch (error) {
        if (controller.signal.aborted || isAbort(error)) return;
        if (error?.kind === 'unauthorized') return onUnauthorized();
        if (!error?.kind) console.warn('catalog: render failed', error);
        state.lastResult = undefined;
        ui.result.hidden = true;
        ui.copyText.disabled = true;
        setText(ui.renderStatus, '');
        setText(ui.renderError, renderErrorMessage(error));
    }
}

function showResult(result) {
    state.lastResult = result;
    const description = typeof result.description === 'string' ? result.description : '';
    setText(ui.resultDescription, description);
    ui.resultDescription.hidden = description === '';
    const items = renderMessages(result);
    ui.messages.replaceChildren(...items);
    ui.result.hidden = false;
    ui.copyText.disabled = false;
    setText(ui.renderStatus, `Rendered: ${items.length} ${items.length === 1 ? 'message' : 'messages'}`);
}

ui.form.addEventListener('submit', event => {
    event.preventDefault();
    void render();
});

// --- copy ---

/** The text a copy button copies, and what the copy status adds about it (nothing, or why it may not work as is). */
function copyText(kind) {
    const name = state.selected;
    const declared = argumentsOf(state.selectedPrompt);
    const values = formValues();
    const common = { serverName: config.serverName, name, declared, values };
    switch (kind) {
        case 'text':
            return { text: state.lastResult === undefined ? '' : resultText(state.lastResult) };
        case 'claude-code': {
            const { command, passable } = claudeCodeCommand(common);
            return { text: command, caveat: passable ? undefined : CLAUDE_CODE_CAVEAT };
        }
        case 'vscode':
            return { text: vscodeCommand(common) };
        case 'inspector':
            return { text: inspectorCommand({ url: endpointUrl, name, declared, values, authenticated: config.auth !== 'none' }) };
        default:
            return { text: '' };
    }
}

/** The clipboard where the browser offers it (a secure context); else the text, selected, to copy by hand. */
async function copy({ text, caveat }) {
    const note = caveat === undefined ? [] : [' ', element('span', 'copy-caveat', caveat)];
    if (navigator.clipboard?.writeText) {
        try {
            await navigator.clipboard.writeText(text);
            ui.copyStatus.replaceChildren('Copied.', ...note);
            return;
        } catch {
            // Refused (permissions): the manual way below.
        }
    }
    const area = element('textarea', 'copy-fallback');
    area.readOnly = true;
    area.value = text;
    area.rows = Math.min(6, text.split('\n').length);
    area.setAttribute('aria-label', 'Text to copy');
    ui.copyStatus.replaceChildren('Select and copy: ', area, ...note);
    area.focus();
    area.select();
}

for (const button of document.querySelectorAll('[data-copy]')) {
    button.addEventListener('click', () => void copy(copyText(button.dataset.copy)));
}

// --- start ---

setText($('[data-field="version"]'), config.version ? `v${config.version}` : '');
setText(ui.credentialLabel, credentialName());
setText(ui.forget, `Forget ${credentialNoun()}`);

// With auth on and no credential, nothing is sent: the form is the only thing a request could lead to.
if (config.auth !== 'none' && state.credential === undefined) showAuth('', false);
else void connect();
