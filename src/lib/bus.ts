/**
 * A minimal synchronous publish/subscribe bus. Catalog changes flow through it
 * to downstream sessions today and to subscription streams later; a listener
 * that throws is reported and does not stop delivery to the others.
 *
 * Publishing allocates nothing (events such as an upstream's list_changed can
 * come tens of thousands a second): the listener list is copied when it
 * changes, not when it is read, so a listener added or removed during a
 * publish takes effect from the next one.
 */
export type Listener<T> = (event: T) => void;

export class Bus<T> {
    #listeners: readonly Listener<T>[] = [];

    constructor(private readonly onListenerError: (error: unknown) => void = () => {}) {}

    subscribe(listener: Listener<T>): () => void {
        this.#listeners = [...this.#listeners, listener];
        let subscribed = true;
        return () => {
            if (!subscribed) return;
            subscribed = false;
            const at = this.#listeners.indexOf(listener);
            if (at !== -1) this.#listeners = this.#listeners.toSpliced(at, 1);
        };
    }

    publish(event: T): void {
        for (const listener of this.#listeners) {
            try {
                listener(event);
            } catch (error) {
                this.onListenerError(error);
            }
        }
    }
}
