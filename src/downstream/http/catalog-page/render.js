// @ts-nocheck -- browser code: the project's typecheck has Node's types only, no DOM lib.
/**
 * A prompts/get result as DOM nodes, the way a client would get it: each message's role and content.
 *
 * Everything in a result comes from an upstream server the page does not trust: text only ever reaches the page
 * through textContent and attributes (the page's Trusted Types policy makes any HTML sink throw); an image or audio is
 * shown only from a data: URL of a type browsers decode without running anything (raster images, common audio
 * codecs; never SVG), and a link is made only for http: and https: (never javascript:, data:, file: ...).
 * The pure parts (which data URL, which href) are exported for the unit tests, which run them under Node.
 */
import { base64Bytes, blocksOf } from './copy-text.js';

const RASTER_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif']);
const AUDIO_TYPES = new Set(['audio/wav', 'audio/mpeg', 'audio/ogg', 'audio/webm', 'audio/mp4', 'audio/aac', 'audio/flac']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A data: URL for base64 data of one of the allowed types, else undefined. */
function dataUrl(allowed, mimeType, data) {
    if (typeof mimeType !== 'string' || typeof data !== 'string') return undefined;
    const type = mimeType.trim().toLowerCase();
    const clean = data.replace(/\s+/g, '');
    if (!allowed.has(type) || !BASE64.test(clean)) return undefined;
    return `data:${type};base64,${clean}`;
}

/** The src of an image block: raster types only (an SVG can carry script and links). */
export function imageSource(block) {
    return dataUrl(RASTER_IMAGES, block?.mimeType, block?.data);
}

/** The src of an audio block: the listed audio types only. */
export function audioSource(block) {
    return dataUrl(AUDIO_TYPES, block?.mimeType, block?.data);
}

/**
 * The href for a resource link's URI: an absolute http: or https: URL without a user name or password, else undefined
 * (shown as text). The link shows this href, so what is read is where it goes (`https://trusted.example@evil.example/`
 * is text: the part before "@" is a user name, not the host).
 */
export function linkHref(uri) {
    if (typeof uri !== 'string') return undefined;
    try {
        const url = new URL(uri);
        if (url.username !== '' || url.password !== '') return undefined;
        return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
    } catch {
        return undefined;
    }
}

/** "image/png, 68 bytes" for a block's caption or stand-in. */
function typeAndSize(mimeType, data) {
    const type = typeof mimeType === 'string' && mimeType !== '' ? mimeType : 'unknown type';
    return typeof data === 'string' ? `${type}, ${base64Bytes(data)} bytes` : type;
}

/** A new element with a class and text (as text, never markup); the page's one way to make nodes. */
export function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
}

/** An element named by `data-field`, as the page's tests and styles find it. */
export function fieldElement(tag, field, text, className) {
    const node = element(tag, className, text);
    node.dataset.field = field;
    return node;
}

function renderText(block) {
    return [element('pre', 'message-text', typeof block.text === 'string' ? block.text : '')];
}

function renderImage(block) {
    const source = imageSource(block);
    if (source === undefined) return [element('p', 'placeholder', `[image: ${typeAndSize(block.mimeType, block.data)}]`)];
    const image = element('img', 'message-image');
    image.alt = `image (${block.mimeType.trim().toLowerCase()})`;
    image.src = source;
    return [image];
}

function renderAudio(block) {
    const caption = `[audio: ${typeAndSize(block.mimeType, block.data)}]`;
    const source = audioSource(block);
    if (source === undefined) return [element('p', 'placeholder', caption)];
    const audio = element('audio', 'message-audio');
    audio.controls = true;
    audio.preload = 'metadata';
    audio.src = source;
    audio.setAttribute('aria-label', `audio (${block.mimeType.trim().toLowerCase()})`);
    return [audio, element('p', 'placeholder', caption)];
}

function renderResource(block) {
    const resource = block.resource && typeof block.resource === 'object' ? block.resource : {};
    const nodes = [fieldElement('p', 'resource-uri', typeof resource.uri === 'string' ? resource.uri : '')];
    if (typeof resource.text === 'string') nodes.push(element('pre', 'message-text', resource.text));
    else nodes.push(element('p', 'placeholder', `binary (${typeAndSize(resource.mimeType, resource.blob)})`));
    return nodes;
}

function renderResourceLink(block) {
    const label = [block.title, block.name].find(value => typeof value === 'string' && value !== '') ?? '';
    const uri = typeof block.uri === 'string' ? block.uri : '';
    const href = linkHref(uri);
    const target = href === undefined ? element('span', 'resource-uri', uri) : element('a', 'resource-uri', href);
    if (href !== undefined) {
        target.href = href;
        target.rel = 'noopener noreferrer';
        target.target = '_blank';
    }
    target.dataset.field = 'resource-uri';
    const nodes = [element('p', 'resource-name', label), target];
    if (typeof block.description === 'string' && block.description !== '') nodes.push(element('p', 'resource-description', block.description));
    return nodes;
}

const RENDERERS = new Map([
    ['text', renderText],
    ['image', renderImage],
    ['audio', renderAudio],
    ['resource', renderResource],
    ['resource_link', renderResourceLink]
]);

/** The renderer of a content type, undefined for any other (a type like `constructor` included: it comes from upstream). */
export function rendererFor(type) {
    return RENDERERS.get(type);
}

/** One list item per content block: `li[data-role][data-content]` with the role's label, then the content. */
function renderBlock(role, block) {
    const item = element('li', 'message');
    item.dataset.role = role;
    item.dataset.content = typeof block.type === 'string' ? block.type : 'unknown';
    const renderer = rendererFor(block.type);
    const body = renderer ? renderer(block) : [element('p', 'placeholder', `[${block.type ?? 'content'}: not shown]`)];
    item.append(fieldElement('span', 'role', role), ...body);
    return item;
}

/** The messages of a prompts/get result as `li` nodes for `ol[data-list="messages"]`. */
export function renderMessages(result) {
    const messages = Array.isArray(result?.messages) ? result.messages : [];
    return messages.flatMap(message => {
        const role = typeof message?.role === 'string' ? message.role : 'unknown';
        return blocksOf(message).map(block => renderBlock(role, block));
    });
}
