// A stand-in for Home Assistant's REST API root, shaped as its developer docs describe GET /api/:
// 200 {"message": "API running."} with a valid bearer token, 401 otherwise. Only what the readiness
// and doctor checks ask; the Home Assistant bridge's own tests use more of the API.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeHomeAssistant {
  url: string;
  close(): Promise<void>;
}

export async function startFakeHomeAssistant(token: string, prefix = ''): Promise<FakeHomeAssistant> {
  const server = http.createServer((req, res) => {
    if (req.url !== `${prefix}/api/`) return void res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end('401: Unauthorized');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'API running.' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
