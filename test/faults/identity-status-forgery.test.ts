// Attack: an anonymous loopback client published a retained `homeclaw/plugins/status/<id>` {state:
// offline} with a large epoch for a plugin it does not own, and the Core marked the real plugin offline
// (its callers got "offline" until its next registration). Defence: a status is accepted only from the
// client that owns the plugin, as heartbeats and results are; the owner's own will still works.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';
import { settle } from './identity-helpers.js';

let core: TestCore;
let plugin: ChildPlugin;
let attacker: ChildClient;

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore();
  plugin = startChildPlugin(process.execPath, [join(REPO_ROOT, 'test', 'fixtures', 'sdk', 'plugin-process.mjs'), core.mqttUrl, 'echoer', '1']);
  await plugin.registered;
  attacker = new ChildClient({ url: core.mqttUrl, clientId: 'mallory' });
  await attacker.connected();
}, 120_000);

afterAll(async () => {
  await attacker?.end();
  await plugin?.stop('SIGKILL');
  await core?.cleanup();
});

describe('forged plugin status', () => {
  it('a status/<id> from a client that does not own the plugin does not mark it offline', async () => {
    expect(core.ctx.registry.get('echoer')?.state).toBe('online');
    await attacker.subscribe(topics.control('probe'));
    await attacker.publish(topics.status('echoer'), JSON.stringify({ state: 'offline', epoch: Number.MAX_SAFE_INTEGER }), { retain: true });
    // A barrier: the Core answers a heartbeat from an unknown id on control/<id>, and it handles one
    // client's messages in order, so once that answer arrives the forged status has been handled.
    await attacker.publish(topics.heartbeat('probe'), JSON.stringify({ epoch: 1, seq: 1, ts: Date.now() }));
    await attacker.message(topics.control('probe'));
    expect(core.ctx.registry.get('echoer')?.state).toBe('online');
    const result = await core.api<{ success: boolean; text: string }>('POST', '/v1/plugins/echoer/tools/echo/run', { text: 'still here' });
    expect(result.body).toMatchObject({ success: true, text: 'echo: still here' });
  });

  it("the owner's own will still marks it offline", async () => {
    await plugin.stop('SIGKILL');
    const deadline = Date.now() + 10_000;
    while (core.ctx.registry.get('echoer')?.state === 'online' && Date.now() < deadline) await settle(100);
    expect(core.ctx.registry.get('echoer')?.state).toBe('offline');
  });
});
