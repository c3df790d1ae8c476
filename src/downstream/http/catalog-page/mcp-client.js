// PLACEHOLDER (branch cat-a): the real module comes from the page's own branch.
export {};
