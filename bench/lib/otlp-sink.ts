/**
 * The collector of the tracing-on target, in the bench process: node:http on 127.0.0.1:0 that takes OTLP/HTTP
 * exports (POST /v1/traces), counts them and their bytes, and answers 200 with an empty response at once, as a
 * healthy collector does. It decodes nothing: what is measured is the gateway's side of the export.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';

export interface OtlpSink {
    /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
    url: string;
    received(): { exports: number; bytes: number };
    close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
    let exports = 0;
    let bytes = 0;
    const server = createServer((req, res) => {
        req.on('data', (chunk: Buffer) => (bytes += chunk.length));
        req.on('end', () => {
            if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
            exports++;
            const json = req.headers['content-type']?.startsWith('application/json') === true;
            res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : undefined);
        });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('OTLP sink: no address');
    return {
        url: `http://127.0.0.1:${address.port}`,
        received: () => ({ exports, bytes }),
        close: async () => {
            server.closeAllConnections();
            await new Promise(resolve => server.close(resolve));
        }
    };
}
