/**
 * VS Code's `${input:ID}`: VS Code asks the user for the value when the server first starts. The gateway cannot
 * ask, so the value comes from the gateway config (`upstreamsFrom[].inputs`), else from the environment variable
 * MCP_INPUT_<ID in upper snake case>, else from the input's own `default`; without any, it is a config error.
 */
import type { Environment } from '../interpolate.js';
import type { Resolution } from './variables.js';

export interface InputSupply {
    /** `upstreamsFrom[i].inputs` of the gateway config. */
    values: Readonly<Record<string, string>>;
    env: Environment;
    /** How the gateway config names this file's entry ("upstreamsFrom[0]"); undefined for `--from`. */
    entry: string | undefined;
}

/**
 * `api-key` -> MCP_INPUT_API_KEY, `githubToken` -> MCP_INPUT_GITHUB_TOKEN.
 * @internal exported for its tests
 */
export function inputVariableName(id: string): string {
    const snake = id
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .replace(/[^A-Za-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '');
    return `MCP_INPUT_${snake.toUpperCase()}`;
}

export class VsCodeInputs {
    readonly #defaults = new Map<string, string | undefined>();

    constructor(
        declared: unknown,
        private readonly supply: InputSupply,
        problem: (path: (string | number)[], message: string) => void
    ) {
        if (declared === undefined) return;
        if (!Array.isArray(declared)) {
            problem(['inputs'], 'must be an array of input definitions ({"type": "promptString", "id": ...})');
            return;
        }
        declared.forEach((input: unknown, index) => {
            const record = input as Record<string, unknown> | null;
            if (typeof record !== 'object' || record === null || typeof record.id !== 'string') {
                problem(['inputs', index], 'must be an object with a string "id"');
                return;
            }
            this.#defaults.set(record.id, typeof record.default === 'string' ? record.default : undefined);
        });
    }

    resolve(id: string, server: string): Resolution {
        const supplied = Object.hasOwn(this.supply.values, id) ? this.supply.values[id] : undefined;
        const variable = inputVariableName(id);
        const value = supplied ?? (Object.hasOwn(this.supply.env, variable) ? this.supply.env[variable] : undefined);
        // Supplied by the operator (VS Code asks for it, often a password): a secret; the file's default is not.
        if (value !== undefined) return { value, secret: true };
        const fallback = this.#defaults.get(id);
        if (fallback !== undefined) return { value: fallback };
        const undeclared = this.#defaults.has(id) ? '' : ' (the file does not declare it in "inputs" either)';
        return {
            problem: `input "${id}" of server "${server}" has no value${undeclared}: VS Code asks the user for it, the gateway cannot; ${this.#howToSupply(id, variable)}`
        };
    }

    #howToSupply(id: string, variable: string): string {
        const entry = this.supply.entry;
        if (entry !== undefined) return `give it in the gateway config as ${entry}.inputs[${JSON.stringify(id)}], or set the environment variable ${variable}`;
        return `set the environment variable ${variable}, or list this file in a gateway config's upstreamsFrom with "inputs": {${JSON.stringify(id)}: "..."}`;
    }
}
