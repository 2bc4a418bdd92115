// Home Assistant end to end: `homeclaw start` (a real process) with HOMECLAW_HA_URL, HOMECLAW_HA_TOKEN and
// HOMECLAW_HA_DISCOVERY, Mosquitto (with the documented ACL) as the broker it shares with Home Assistant,
// and the stand-in Home Assistant. The Core registers "homeassistant"; "turn on the kitchen light" in a
// chat reaches the stand-in as HassTurnOn for that entity, with a slash command without an LLM and in
// plain words with the scripted model; the Core and its plugins appear as discovery devices; an
// automation calls a plugin through the MQTT front door.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut, PluginResult } from '../../src/protocol/types.js';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { startScriptedLlm, systemPromptOf, type ChatRequestBody, type ScriptedLlm, type ScriptedResponse } from '../helpers/scripted-llm.js';
import { deviceDiscoveryProblems } from '../fixtures/homeassistant/discovery-rules.js';
import { startStandInHomeAssistant, type StandInHomeAssistant } from '../fixtures/homeassistant/stand-in.js';
import { channelUser, ensureBuilt, REPO_ROOT, SHIPPED_PLUGINS_DIR } from './helpers.js';
import { aclWithHomeAssistantFromDocs } from '../helpers/external-broker-docs.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli.js');
const CHANNEL = 'e2e';
const USERS = ['homeclaw-core', 'homeassistant', 'automations', CHANNEL];

interface CoreProcess {
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

function startCoreProcess(env: NodeJS.ProcessEnv): Promise<CoreProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'start'], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const stop = (): Promise<void> =>
      new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      });
    const timer = setTimeout(() => reject(new Error(`homeclaw start did not come up:\n${output}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('HomeClaw Core running')) {
        clearTimeout(timer);
        resolve({ child, output: () => output, stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`homeclaw start exited with ${code}:\n${output}`));
    });
  });
}

async function api<T>(env: NodeJS.ProcessEnv, path: string): Promise<T> {
  const token = readFileSync(join(env.HOMECLAW_DATA_DIR!, 'admin.token'), 'utf8').trim();
  const res = await fetch(`${env.HOMECLAW_URL!}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return (await res.json()) as T;
}

async function waitForPlugin(env: NodeJS.ProcessEnv, predicate: (plugin: { state: string; capabilities?: unknown[] }) => boolean): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    const plugin = await api<{ state: string; capabilities?: unknown[] }>(env, '/api/plugins/homeassistant').catch(() => undefined);
    if (plugin && predicate(plugin)) return;
    if (Date.now() > until) throw new Error(`homeassistant never became ready: ${JSON.stringify(plugin)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A model that reads the prompt like a real one: it routes to Home Assistant when a listed device is named. */
function scriptedModel(request: ChatRequestBody): ScriptedResponse {
  const users = request.messages.filter((m) => m.role === 'user');
  const text = String(users[users.length - 1]?.content ?? '').toLowerCase();
  const prompt = systemPromptOf(request);
  const device = /Devices exposed to Assist \(name, domain, area\): (.*)/
    .exec(prompt)?.[1]
    ?.split('; ')
    .map((entry) => entry.replace(/ \(.*$/, '').split(' / ')[0]!)
    .find((name) => text.includes(name.toLowerCase()));
  if (prompt.includes('### homeassistant: Home Assistant') && device && /turn on|switch on/.test(text)) {
    return { tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'homeassistant', capability_id: 'HassTurnOn', parameters: { name: device } } }] };
  }
  return { text: `I cannot help with: ${text}` };
}

let mosquitto: MosquittoHandle;
let stand: StandInHomeAssistant;
let llm: ScriptedLlm;
const dataDirs: string[] = [];
const clients: TestClient[] = [];

async function login(name: string): Promise<TestClient> {
  const client = await connectTestClient(mosquitto.url, { username: name, password: `${name}-secret`, clientId: `${name}-e2e`, protocolVersion: 5 });
  clients.push(client);
  return client;
}

async function haEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-e2e-ha-'));
  dataDirs.push(dataDir);
  // With an external broker the Core binds a channel to users by config (the broker's ACL says who may publish there).
  const configFile = join(dataDir, 'homeclaw.yaml');
  writeFileSync(configFile, `access:\n  channels:\n    ${CHANNEL}: { users: [alice, bob] }\n`);
  return coreProcessEnv(dataDir, SHIPPED_PLUGINS_DIR, {
    HOMECLAW_CONFIG: configFile,
    HOMECLAW_BROKER_URL: mosquitto.url,
    HOMECLAW_BROKER_USERNAME: 'homeclaw-core',
    HOMECLAW_BROKER_PASSWORD: 'homeclaw-core-secret',
    HOMECLAW_HA_URL: stand.url,
    HOMECLAW_HA_TOKEN: stand.token,
    HOMECLAW_HA_DISCOVERY: 'true',
    ...extra,
  });
}

beforeAll(async () => {
  await ensureBuilt();
  mosquitto = await startMosquitto({ users: Object.fromEntries(USERS.map((u) => [u, `${u}-secret`])), acl: aclWithHomeAssistantFromDocs() });
  stand = await startStandInHomeAssistant();
  llm = await startScriptedLlm({ respond: scriptedModel });
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.end(true);
  await llm?.close();
  await stand?.close();
  await mosquitto?.stop();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('homeclaw start with Home Assistant', () => {
  it('no LLM: registers homeassistant, a slash command turns on the kitchen light, and the devices appear in Home Assistant', async () => {
    const env = await haEnv();
    const core = await startCoreProcess(env);
    try {
      await waitForPlugin(env, (p) => p.state === 'online' && (p.capabilities?.length ?? 0) > 0);
      const ha = await login('homeassistant');
      await ha.subscribe('homeassistant/device/+/config');
      for (const id of ['core', 'homeassistant', 'time', 'notes', 'weather', 'buy']) {
        const device = (await ha.waitFor(topics.haDiscovery('homeassistant', `homeclaw_${id}`), (m) => m.payload.length > 0, 10_000)).json();
        expect(deviceDiscoveryProblems(device), id).toEqual([]);
      }
      const user = await login(CHANNEL);
      await user.subscribe(topics.channelOut(CHANNEL));
      const before = stand.calls.length;
      const reply = await channelUser(user, CHANNEL, 'alice').say('/homeassistant HassTurnOn name="Kitchen Light"', {}, 15_000);
      expect(reply).toMatchObject({ kind: 'answer', plugin_id: 'homeassistant', text: 'Turned on Kitchen Light.' });
      expect(stand.calls.slice(before)).toEqual([{ name: 'HassTurnOn', arguments: { name: 'Kitchen Light' } }]);
      // An automation calls a plugin through the front door.
      const automations = await login('automations');
      await automations.subscribe(topics.callResult('automation-1'));
      await automations.publish(topics.call('homeassistant', 'HassTurnOff'), { request_id: 'automation-1', parameters: { name: 'Hallway Light' } });
      const result = (await automations.waitFor(topics.callResult('automation-1'), () => true, 10_000)).json<PluginResult>();
      expect(result).toMatchObject({ request_id: 'automation-1', success: true, text: 'Turned off Hallway Light.' });
      expect(stand.calls.at(-1)).toEqual({ name: 'HassTurnOff', arguments: { name: 'Hallway Light' } });
    } finally {
      await core.stop();
    }
    expect(core.output()).not.toContain(stand.token);
  }, 90_000);

  it('with the scripted model: "turn on the kitchen light" reaches Home Assistant as HassTurnOn for that entity', async () => {
    stand.entities.find((e) => e.entity_id === 'light.kitchen_light')!.state = 'off';
    const env = await haEnv({ HOMECLAW_LLM_BASE_URL: llm.url, HOMECLAW_LLM_MODEL: 'scripted' });
    const core = await startCoreProcess(env);
    try {
      await waitForPlugin(env, (p) => p.state === 'online' && (p.capabilities?.length ?? 0) > 0);
      const user = await login(CHANNEL);
      await user.subscribe(topics.channelOut(CHANNEL));
      const before = stand.calls.length;
      const reply: ChannelMessageOut = await channelUser(user, CHANNEL, 'bob').say('turn on the kitchen light', {}, 15_000);
      expect(reply).toMatchObject({ kind: 'answer', plugin_id: 'homeassistant', text: 'Turned on Kitchen Light.' });
      expect(stand.calls.slice(before)).toEqual([{ name: 'HassTurnOn', arguments: { name: 'Kitchen Light' } }]);
      expect(stand.entities.find((e) => e.entity_id === 'light.kitchen_light')!.state).toBe('on');
      const prompt = systemPromptOf(llm.requests.at(-1)!);
      expect(prompt).toContain('### homeassistant: Home Assistant');
      expect(prompt).toContain('Kitchen Light / Kitchen Lamp (light, Kitchen)');
    } finally {
      await core.stop();
    }
  }, 90_000);

  it('with discovery on and the embedded broker, homeclaw start warns', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-e2e-ha-embedded-'));
    dataDirs.push(dataDir);
    const env = await coreProcessEnv(dataDir, SHIPPED_PLUGINS_DIR, { HOMECLAW_HA_DISCOVERY: 'true' });
    const core = await startCoreProcess(env);
    try {
      expect(core.output()).toContain('warning: homeassistant.discovery is on but the Core runs its embedded MQTT 3.1.1 broker');
      expect(core.output()).toContain('HOMECLAW_BROKER_URL');
    } finally {
      await core.stop();
    }
  }, 60_000);
});
