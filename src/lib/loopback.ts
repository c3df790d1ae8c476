/** Whether a listen address is reachable from this machine only. */
export function isLoopback(host: string): boolean {
    return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}
