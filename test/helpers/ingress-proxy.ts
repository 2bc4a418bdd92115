// A stand-in for Home Assistant's ingress path: the browser talks to /api/hassio_ingress/<token>/...,
// the proxy strips that prefix and forwards to the Core from a fixed source address (the Supervisor's is
// 172.30.32.2; here a loopback address of its own) with X-Ingress-Path and the X-Remote-User-* headers,
// streaming the answer back (server-sent events included), as the Supervisor does. When the Core cannot be
// reached it answers 502, as Home Assistant's ingress view does. Faults can be scheduled per path: the
// next requests for it are cut off (the browser sees a network error) or answered 502 without reaching
// the Core.
import { createServer, request, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

export type IngressFault = 'drop' | 'bad-gateway';

export interface IngressProxy {
  url: string;
  /** Every path the browser asked for, after the prefix, in order (faulted ones included). */
  requests: string[];
  /** The prefix the browser sees, with a trailing slash. */
  entry: string;
  close(): Promise<void>;
}

export async function startIngressProxy(options: {
  target: string;
  sourceAddress: string;
  token: string;
  user?: { id: string; name: string; display_name: string };
  /** Per path (without the prefix or query), the faults its next requests meet, in order. */
  faults?: Record<string, IngressFault[]>;
}): Promise<IngressProxy> {
  const target = new URL(options.target);
  const prefix = `/api/hassio_ingress/${options.token}`;
  const faults = new Map(Object.entries(options.faults ?? {}).map(([path, list]) => [path, [...list]]));
  const requests: string[] = [];
  const badGateway = (res: ServerResponse): void => {
    if (res.headersSent) res.destroy();
    else res.writeHead(502, { 'content-type': 'text/plain' }).end('502: Bad Gateway');
  };
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith(`${prefix}/`)) {
      res.writeHead(404).end('not an ingress path');
      return;
    }
    const path = url.slice(prefix.length).split('?')[0] ?? '/';
    requests.push(path);
    const fault = faults.get(path)?.shift();
    if (fault === 'drop') {
      req.socket.destroy();
      return;
    }
    if (fault === 'bad-gateway') {
      badGateway(res);
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers, host: target.host, 'x-ingress-path': prefix };
    for (const name of ['x-remote-user-id', 'x-remote-user-name', 'x-remote-user-display-name']) delete headers[name];
    if (options.user) {
      headers['x-remote-user-id'] = options.user.id;
      headers['x-remote-user-name'] = options.user.name;
      headers['x-remote-user-display-name'] = options.user.display_name;
    }
    const upstream = request(
      { host: target.hostname, port: target.port, path: url.slice(prefix.length), method: req.method, headers, localAddress: options.sourceAddress },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => badGateway(res));
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    entry: `http://127.0.0.1:${port}${prefix}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
