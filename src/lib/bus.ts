/**
 * A minimal synchronous publish/subscribe bus. Catalog changes flow through it
 * to downstream sessions today and to subscription streams later; a listener
 * that throws is reported and does not stop delivery to the others.
 */
export type Listener<T> = (event: T) => void;

export class Bus<T> {
    readonly #listeners = new Set<Listener<T>>();

    constructor(private readonly onListenerError: (error: unknown) => void = () => {}) {}

    subscribe(listener: Listener<T>): () => void {
        this.#listeners.add(listener);
        return () => this.#listeners.delete(listener);
    }

    publish(event: T): void {
        for (const listener of [...this.#listeners]) {
            try {
                listener(event);
            } catch (error) {
                this.onListenerError(error);
            }
        }
    }
}
