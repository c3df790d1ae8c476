/** The bench upstream's prompts, for the bench, the upstream and the floor alike. */
export const promptName = (i: number) => `prompt-${String(i).padStart(4, '0')}`;

export const benchPrompt = (i: number) => ({
    name: promptName(i),
    description: `Benchmark prompt number ${i}`,
    arguments: [{ name: 'topic', description: 'What to talk about', required: false }]
});
