/**
 * Who may read the operator endpoints. Metrics and the dashboard's data name
 * clients and prompts, hidden ones included, and /healthz and /readyz name
 * upstreams with their errors: fine on a gateway anyone may call anyway (auth
 * off), a leak of policy where callers must authenticate. There, on the MCP
 * listener, metrics and the dashboard are served only behind the operator
 * token (metrics.bearerToken), and the health checks answer their status (and
 * status code, for probes) to everyone but their details to that token only. A
 * listener of the operator's own (metrics.listen) is theirs to protect: nothing
 * changes there.
 */
export type AuthMode = 'none' | 'apiKey' | 'jwt';

/** Whether metrics and the dashboard may be served on the MCP listener. */
export function operatorRoutesOnMcpListener(authMode: AuthMode, bearerToken: string | undefined): boolean {
    return authMode === 'none' || bearerToken !== undefined;
}

/** Why metrics and the dashboard are not served on the MCP listener, and how to turn them on. */
export function withheldReason(authMode: AuthMode): string {
    return `auth.mode is ${authMode} and metrics.bearerToken is not set, so anyone who can reach the port could read them; set metrics.bearerToken, or serve them on an address of their own with metrics.listen`;
}

/** Whether /healthz and /readyz on the MCP listener show upstream details to this request. */
export function healthDetailed(authMode: AuthMode, operatorTokenPresented: boolean): boolean {
    return authMode === 'none' || operatorTokenPresented;
}
