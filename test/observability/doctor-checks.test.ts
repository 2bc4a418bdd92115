// The single doctor checks against real parts where the machine has them (sockets, files, Mosquitto,
// the Chroma binding, a running Core) and injected failures where it cannot produce one (an old Node,
// a binding built for a newer glibc).
import { createServer, type Server, type Socket } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkChromaBinding,
  checkDataDir,
  checkEncoder,
  checkExternalBroker,
  checkNodeVersion,
  checkPortFree,
  chromaBindingPackage,
  minimumNodeMajor,
} from '../../src/observability/doctor-checks.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { freePort } from '../helpers/ports.js';
import { startTestCore, type TestCore } from '../helpers/core.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'homeclaw-doctor-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function occupy(port: number): Promise<Server> {
  const sockets = new Set<Socket>();
  // Never answers: doctor's "is it a HomeClaw Core?" request must give up on its own.
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return server;
}

describe('node version', () => {
  it('passes at or above the engines minimum and fails below it with the fix', () => {
    expect(minimumNodeMajor('>=20')).toBe(20);
    expect(minimumNodeMajor('^20.11 || >=22')).toBe(20);
    expect(checkNodeVersion('v20.20.2', '>=20')).toMatchObject({ status: 'pass' });
    expect(checkNodeVersion('v22.1.0', '>=20')).toMatchObject({ status: 'pass' });
    const old = checkNodeVersion('v18.19.0', '>=20');
    expect(old).toMatchObject({ name: 'node', status: 'fail', detail: 'Node.js v18.19.0 is too old (needs >=20)' });
    expect(old.fix).toMatch(/install Node.js 20 or newer/);
    expect(checkNodeVersion('unknown', '>=20').status).toBe('fail');
  });
});

describe('ports', () => {
  it('a free port passes; port 0 is skipped', async () => {
    const port = await freePort();
    expect(await checkPortFree({ name: 'http port', host: '127.0.0.1', port, setting: 'HOMECLAW_HTTP_PORT' })).toMatchObject({
      status: 'pass',
      detail: `127.0.0.1:${port} is free`,
    });
    expect((await checkPortFree({ name: 'http port', host: '127.0.0.1', port: 0, setting: 'x' })).status).toBe('skip');
  });

  it('a port taken by another program fails with how to find it and which setting moves the Core', async () => {
    const port = await freePort();
    await occupy(port);
    const result = await checkPortFree({ name: 'mqtt port', host: '127.0.0.1', port, setting: 'HOMECLAW_MQTT_PORT / broker.port' });
    expect(result).toMatchObject({ status: 'fail', detail: `127.0.0.1:${port} is in use` });
    expect(result.fix).toContain(`sport = :${port}`);
    expect(result.fix).toContain('HOMECLAW_MQTT_PORT / broker.port');
  });

  it('a port held by a running HomeClaw Core says so', async () => {
    const core: TestCore = await startTestCore();
    cleanups.push(() => core.cleanup());
    const result = await checkPortFree({ name: 'http port', host: '127.0.0.1', port: core.httpPort, setting: 'HOMECLAW_HTTP_PORT / http.port' });
    expect(result).toMatchObject({ status: 'fail', detail: `127.0.0.1:${core.httpPort} is in use by a running HomeClaw Core` });
    expect(result.fix).toMatch(/^stop that Core first/);
  });

  it('an address that is not this machine fails clearly', async () => {
    // 192.0.2.0/24 is reserved for documentation (RFC 5737): never a local address.
    const result = await checkPortFree({ name: 'http port', host: '192.0.2.1', port: 8765, setting: 'HOMECLAW_HTTP_HOST' });
    expect(result).toMatchObject({ status: 'fail', detail: expect.stringContaining('192.0.2.1 is not an address of this machine') });
  });
});

describe('data dir', () => {
  it('an existing folder passes and keeps no probe file; a missing one passes when its parent is writable', () => {
    const dir = tempDir();
    expect(checkDataDir(dir)).toMatchObject({ status: 'pass', detail: `${dir} is writable` });
    expect(readdirSync(dir)).toEqual([]);
    expect(checkDataDir(join(dir, 'a', 'b'))).toMatchObject({ status: 'pass', detail: expect.stringContaining(`it will be created in ${dir}`) });
    expect(existsSync(join(dir, 'a'))).toBe(false);
  });

  it('a file in the way fails with the fix (works as root too, unlike permission bits)', () => {
    const dir = tempDir();
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    expect(checkDataDir(file)).toMatchObject({ status: 'fail', detail: `${file} exists but is not a directory` });
    const below = checkDataDir(join(file, 'data'));
    expect(below).toMatchObject({ status: 'fail', detail: expect.stringContaining('is not a directory') });
    expect(below.fix).toContain('HOMECLAW_DATA_DIR');
  });
});

describe('external broker', () => {
  let mosquitto: MosquittoHandle | undefined;
  afterEach(async () => {
    await mosquitto?.stop();
    mosquitto = undefined;
  });

  it('connects with the configured login; a wrong password and a closed port fail with their fixes', async () => {
    mosquitto = await startMosquitto({ users: { core: 'right-password' } });
    expect(await checkExternalBroker({ url: mosquitto.url, username: 'core', password: 'right-password' }, 5000)).toMatchObject({
      status: 'pass',
      detail: `connected to ${mosquitto.url} as core`,
    });
    const refused = await checkExternalBroker({ url: mosquitto.url, username: 'core', password: 'wrong' }, 5000);
    expect(refused).toMatchObject({ status: 'fail', detail: expect.stringContaining('refused the login') });
    expect(refused.fix).toContain('HOMECLAW_BROKER_PASSWORD');
    expect(refused.detail).not.toContain('wrong');
    const closed = await checkExternalBroker({ url: `mqtt://127.0.0.1:${await freePort()}`, username: null, password: null }, 3000);
    expect(closed).toMatchObject({ status: 'fail', detail: expect.stringContaining('ECONNREFUSED') });
    expect(closed.fix).toContain('HOMECLAW_BROKER_URL');
  });
});

describe('retrieval parts', () => {
  it('the Chroma binding of this platform loads', () => {
    expect(checkChromaBinding(chromaBindingPackage())).toMatchObject({ status: 'pass' });
    expect(chromaBindingPackage('linux', 'arm64')).toBe('chromadb-js-bindings-linux-arm64-gnu');
    expect(chromaBindingPackage('freebsd', 'x64')).toBeNull();
  });

  it('a binding built for a newer glibc, a missing binding and an unsupported platform fail with their fixes', () => {
    const glibc = checkChromaBinding('chromadb-js-bindings-linux-x64-gnu', () => {
      throw new Error("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found");
    });
    expect(glibc).toMatchObject({ status: 'fail', detail: expect.stringContaining('needs a newer C library') });
    expect(glibc.fix).toMatch(/npm ci.*HOMECLAW_RETRIEVAL_ENABLED=false/);
    const missing = checkChromaBinding('chromadb-js-bindings-linux-x64-gnu', () => {
      throw Object.assign(new Error("Cannot find module 'chromadb-js-bindings-linux-x64-gnu'"), { code: 'MODULE_NOT_FOUND' });
    });
    expect(missing).toMatchObject({ status: 'fail', detail: 'chromadb-js-bindings-linux-x64-gnu is not installed' });
    expect(checkChromaBinding(null)).toMatchObject({ status: 'fail', detail: expect.stringContaining('no native binding') });
  });

  it('an encoder that throws or returns nothing fails with the fix', async () => {
    const broken = await checkEncoder('use-lite-512', () => Promise.reject(new Error('model file missing')), 'reinstall');
    expect(broken).toMatchObject({ status: 'fail', detail: 'use-lite-512 does not work: model file missing', fix: 'reinstall' });
    expect(await checkEncoder('x', () => Promise.resolve([]), 'fix it')).toMatchObject({ status: 'fail', detail: 'x returned no vector' });
    expect(await checkEncoder('y', () => Promise.resolve([[0.6, 0.8]]), 'fix it')).toMatchObject({ status: 'pass', detail: expect.stringMatching(/^y: 2-d/) });
  });
});
