// PLACEHOLDER (branch cat-a): the real page script comes from the page's own branch.
import './mcp-client.js';
import './render.js';
