/** Names of the bench upstream's prompts, for the bench and the upstream alike. */
export const promptName = (i: number) => `prompt-${String(i).padStart(4, '0')}`;
