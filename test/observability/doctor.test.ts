// runDoctor over a whole configuration: a passing run on free ports with the LLM and Home Assistant
// answering, and a run where several things are wrong at once, each failure with its fix.
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/observability/doctor.js';
import { freePort } from '../helpers/ports.js';
import { startFakeHomeAssistant } from '../helpers/fake-home-assistant.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fakeHomeAssistant(token: string): Promise<string> {
  const ha = await startFakeHomeAssistant(token);
  cleanups.push(() => ha.close());
  return ha.url;
}

async function baseEnv(): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-doctor-run-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    HOMECLAW_DATA_DIR: dataDir,
    HOMECLAW_MQTT_PORT: String(await freePort()),
    HOMECLAW_WS_PORT: String(await freePort()),
    HOMECLAW_HTTP_PORT: String(await freePort()),
  };
}

describe('runDoctor', () => {
  it('passes when the ports are free, the data dir is writable, retrieval loads and the LLM and Home Assistant answer', async () => {
    const llm = await startScriptedLlm();
    cleanups.push(() => llm.close());
    const ha = await fakeHomeAssistant('ha-token');
    const env = { ...(await baseEnv()), HOMECLAW_LLM_BASE_URL: llm.url, HOMECLAW_LLM_MODEL: 'scripted', HOMECLAW_HA_URL: ha, HOMECLAW_HA_TOKEN: 'ha-token' };
    const report = await runDoctor({ env, nodeVersion: 'v20.20.2' });
    expect(report.checks.map((c) => [c.name, c.status])).toEqual([
      ['node', 'pass'],
      ['config', 'pass'],
      ['mqtt port', 'pass'],
      ['ws port', 'pass'],
      ['http port', 'pass'],
      ['data dir', 'pass'],
      ['broker', 'skip'],
      ['chroma', 'pass'],
      ['encoder', 'pass'],
      ['llm', 'pass'],
      ['homeassistant', 'pass'],
    ]);
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.name === 'encoder')?.detail).toMatch(/^use-lite-512: 512-d/);
  }, 60_000);

  it('reports every problem at once, each with its fix, and is not ok', async () => {
    const env = await baseEnv();
    // A program that holds the port and never speaks HTTP (it reads, so it sees the doctor hang up).
    const taken: Server = createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => taken.listen(Number(env.HOMECLAW_HTTP_PORT), '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const file = join(env.HOMECLAW_DATA_DIR!, 'a-file');
    writeFileSync(file, 'x');
    const ha = await fakeHomeAssistant('the-right-token');
    const report = await runDoctor({
      env: {
        ...env,
        HOMECLAW_DATA_DIR: join(file, 'data'),
        HOMECLAW_RETRIEVAL_ENABLED: 'false',
        HOMECLAW_LLM_BASE_URL: `http://127.0.0.1:${await freePort()}/v1`,
        HOMECLAW_HA_URL: ha,
        HOMECLAW_HA_TOKEN: 'a-wrong-token',
      },
      nodeVersion: 'v18.20.0',
    });
    expect(report.ok).toBe(false);
    const failed = report.checks.filter((c) => c.status === 'fail');
    expect(failed.map((c) => c.name)).toEqual(['node', 'http port', 'data dir', 'llm', 'homeassistant']);
    for (const check of failed) expect(check.fix, check.name).toEqual(expect.any(String));
    expect(failed.find((c) => c.name === 'llm')?.fix).toContain('HOMECLAW_LLM_BASE_URL');
    expect(failed.find((c) => c.name === 'homeassistant')?.fix).toMatch(/refused the token.*HOMECLAW_HA_TOKEN/);
    expect(JSON.stringify(report)).not.toContain('a-wrong-token');
    expect(report.checks.filter((c) => c.status === 'skip').map((c) => c.name)).toEqual(['broker', 'chroma', 'encoder']);
  }, 60_000);

  it('an invalid configuration is one failure listing every problem; nothing else is checked', async () => {
    const report = await runDoctor({ env: { HOMECLAW_MQTT_PORT: 'abc', HOMECLAW_LOG_FORMAT: 'fancy' }, nodeVersion: 'v20.0.0' });
    expect(report.ok).toBe(false);
    expect(report.checks.map((c) => c.name)).toEqual(['node', 'config']);
    expect(report.checks[1]?.detail).toContain('env:HOMECLAW_MQTT_PORT: must be a port number');
    expect(report.checks[1]?.detail).toContain('/log_format');
  });
});
