// A broker that refuses MQTT 5: Aedes speaks only 3.1.1 and answers a version-5 CONNECT with CONNACK
// return code 1 ("unacceptable protocol version"), as MQTT 3.1.1 requires. The Core (protocol_version 5,
// the default) and an SDK plugin asking for 5 both go on with 3.1.1, each saying so once, and calls work.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { memoryLogger, type LogLine } from '../helpers/memory-logger.js';
import { LineProcess } from '../fixtures/mqtt5/line-process.js';
import { ensureBuilt, REPO_ROOT } from './helpers.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'mqtt5');

let broker: Aedes;
let server: Server;
let url: string;
let core: TestCore;
let lines: LogLine[];
const plugins: LineProcess[] = [];
const connects: number[] = [];

beforeAll(async () => {
  await ensureBuilt();
  broker = await Aedes.createBroker();
  // Aedes reports every CONNECT it refuses; the protocol levels show who asked for what.
  broker.on('connectionError', (_client, error) => connects.push((error as { errorCode?: number }).errorCode ?? -1));
  server = createServer((socket) => broker.handle(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const memory = memoryLogger();
  lines = memory.lines;
  core = await startTestCore({ overrides: { broker: { url } }, log: memory.log });
  for (const [id, version] of [
    ['old311', '3.1.1'],
    ['wants5', '5'],
  ] as const) {
    const plugin = new LineProcess(process.execPath, [join(FIXTURES, 'sdk-plugin.mjs'), url, id, version]);
    plugins.push(plugin);
    await plugin.event('registered');
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(plugins.map((plugin) => plugin.stop()));
  await core?.cleanup();
  await new Promise<void>((resolve) => broker.close(() => resolve()));
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('a broker that refuses MQTT 5', () => {
  it('the Core falls back to 3.1.1 and logs it once, with the CONNACK it got', () => {
    const fallback = lines.filter((line) => /refused MQTT 5/.test(line.msg));
    expect(fallback).toHaveLength(1);
    expect(fallback[0]).toMatchObject({ code: 1 });
    expect(lines.find((line) => line.msg === 'connected to external broker')).toMatchObject({ mqtt: '3.1.1' });
    // Two refusals in all (the Core's and the plugin's first CONNECT), both "unacceptable protocol version".
    expect(connects).toEqual([1, 1]);
  });

  it('an SDK plugin asking for MQTT 5 also goes on with 3.1.1 and says so', async () => {
    const registered = await plugins[1]!.event('registered');
    expect(registered['warnings']).toEqual([expect.stringMatching(/refused MQTT 5.*3\.1\.1/)]);
  });

  it('calls through the fallen-back Core reach both plugins, without MQTT 5 properties', async () => {
    for (const id of ['old311', 'wants5']) {
      const result = await core.ctx.dispatcher.invoke({ plugin_id: id, capability_id: 'echo', parameters: { text: id } });
      expect(result, JSON.stringify(result)).toMatchObject({ success: true });
      expect((result.data as { traceparent: unknown }).traceparent).toBeNull();
    }
  });
});
