// Attacks on the HTTP port from the LAN, without a token: (1) connections opened and held, each a file
// descriptor until the server's header timeout, without any bound on how many; (2) a stream of requests
// without a token, each of which wrote a warning line. Defences: at most `http.max_connections_per_address`
// open connections per address and `http.max_connections` in all (more are closed at once), and each
// refusal logged once per address per window.
import { createConnection, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { memoryLogger } from '../helpers/memory-logger.js';
import { openIdle as openIdleFrom, type IdleConnection } from '../helpers/idle-connection.js';

const PER_ADDRESS = 16;
const TOTAL = 24;
let core: TestCore;
let logged: ReturnType<typeof memoryLogger>;
const held: Socket[] = [];

// A Core per test, so no test sees connections another one left closing.
beforeEach(async () => {
  logged = memoryLogger('info');
  core = await startTestCore({ log: logged.log, overrides: { http: { max_connections_per_address: PER_ADDRESS, max_connections: TOTAL } } });
}, 120_000);

afterEach(async () => {
  for (const socket of held.splice(0)) socket.destroy();
  await core?.cleanup();
});

function httpPort(): number {
  return Number(new URL(core.httpUrl).port);
}

const openIdle = (localAddress: string): Promise<IdleConnection> => openIdleFrom(httpPort(), localAddress, held);

/** One raw HTTP/1.1 request from `localAddress`; resolves with the status code, or 0 when the connection closed first. */
function request(localAddress: string, path: string, token?: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: httpPort(), localAddress });
    let received = '';
    socket.on('error', () => resolve(0));
    socket.once('connect', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n${token ? `authorization: Bearer ${token}\r\n` : ''}\r\n`),
    );
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.once('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
  });
}

/** As request, tried again for up to 5 s while the connection is refused (closed connections are counted out when the server sees them close). */
async function requestSoon(localAddress: string, path: string, token?: string): Promise<number> {
  let status = 0;
  for (let i = 0; i < 50 && status === 0; i++) {
    status = await request(localAddress, path, token);
    if (status === 0) await new Promise((r) => setTimeout(r, 100));
  }
  return status;
}

describe('HTTP connections', () => {
  it('at most the limit are open per address; more are closed at once, and other addresses are served', async () => {
    const results = await Promise.all(Array.from({ length: PER_ADDRESS + 5 }, () => openIdle('127.0.0.5')));
    expect(results.filter((r) => r.closedAtOnce)).toHaveLength(5);
    expect(await request('127.0.0.6', '/api/status', core.adminToken)).toBe(200);
    // Once its connections close, the address is served again.
    for (const socket of held.splice(0)) socket.destroy();
    expect(await requestSoon('127.0.0.5', '/api/status', core.adminToken)).toBe(200);
    expect(logged.lines.some((line) => line.msg === 'HTTP connection refused: too many open' && line.address === '127.0.0.5')).toBe(true);
  }, 60_000);

  it('at most the total are open from all addresses together; more are closed at once', async () => {
    const fromFirst = await Promise.all(Array.from({ length: PER_ADDRESS }, () => openIdle('127.0.0.9')));
    const fromSecond = await Promise.all(Array.from({ length: TOTAL - PER_ADDRESS }, () => openIdle('127.0.0.10')));
    expect([...fromFirst, ...fromSecond].filter((r) => r.closedAtOnce)).toHaveLength(0);
    expect((await openIdle('127.0.0.11')).closedAtOnce).toBe(true);
    expect(logged.lines.some((line) => line.msg === 'HTTP connection refused: too many open' && line.address === '127.0.0.11')).toBe(true);
    for (const socket of held.splice(0)) socket.destroy();
    expect(await requestSoon('127.0.0.11', '/api/status', core.adminToken)).toBe(200);
  }, 60_000);

  it('logs a stream of requests without a token once per address per window', async () => {
    const before = logged.lines.length;
    for (let i = 0; i < 200; i++) expect(await request('127.0.0.7', '/api/plugins')).toBe(401);
    const lines = logged.lines.slice(before).filter((line) => line.msg === 'HTTP request without a valid bearer token refused');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ ip: '127.0.0.7', path: '/api/plugins' });
    // Another address gets its own line.
    expect(await request('127.0.0.8', '/api/plugins')).toBe(401);
    expect(logged.lines.slice(before).filter((line) => line.msg === 'HTTP request without a valid bearer token refused')).toHaveLength(2);
  }, 60_000);
});
