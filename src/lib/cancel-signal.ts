/**
 * What a cancellable wait reads of its caller's cancellation: an AbortSignal is one, and so is a client request's
 * ticket (downstream/requests.ts), which is one without making an AbortSignal (one per request costs about 10 us of
 * CPU once its collection is counted). A listener added once aborted is never called, as on an AbortSignal.
 */
export interface CancelSignal {
    readonly aborted: boolean;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as AbortSignal's: what it was aborted with, read as the Error it is here
    readonly reason: any;
    addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
    removeEventListener(type: 'abort', listener: () => void): void;
}
