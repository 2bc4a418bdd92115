// `homeclaw doctor` as a real process: the readable report and exit 0 when everything passes, --json
// and exit 1 when something fails, each failure followed by its fix.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/observability/doctor.js';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';
import { freePort } from '../helpers/ports.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli.js');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

function doctor(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Only what the test sets: the developer's HOMECLAW_* variables must not leak in.
    const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('HOMECLAW_')));
    execFile(process.execPath, [CLI, 'doctor', ...args], { env: { ...clean, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function freshEnv(): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-doctor-cli-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    HOMECLAW_DATA_DIR: dataDir,
    HOMECLAW_MQTT_PORT: String(await freePort()),
    HOMECLAW_WS_PORT: '0',
    HOMECLAW_HTTP_PORT: String(await freePort()),
  };
}

describe('homeclaw doctor', () => {
  it('prints one line per check and exits 0 when nothing fails', async () => {
    const env = await freshEnv();
    const result = await doctor([], env);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ok {4}node {11}Node\.js v\d+\.\d+\.\d+ \(needs >=20\)$/);
    expect(result.stdout).toMatch(/^ok {4}http port {6}127\.0\.0\.1:\d+ is free$/m);
    expect(result.stdout).toMatch(/^skip {2}ws port {8}MQTT over WebSocket is disabled/m);
    expect(result.stdout).toMatch(/^ok {4}chroma {9}chromadb-js-bindings-\S+ loads$/m);
    expect(result.stdout).toMatch(/^ok {4}encoder {8}use-lite-512: 512-d/m);
    expect(result.stdout).toMatch(/^skip {2}llm {12}no LLM configured/m);
    expect(lines.at(-1)).toBe('All checks passed.');
  }, 60_000);

  it('--json: a taken port and an unreachable LLM fail, exit code 1, each with its fix', async () => {
    const env = await freshEnv();
    const taken: Server = createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => taken.listen(Number(env.HOMECLAW_MQTT_PORT), '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const result = await doctor(['--json'], { ...env, HOMECLAW_RETRIEVAL_ENABLED: 'false', HOMECLAW_LLM_BASE_URL: `http://127.0.0.1:${await freePort()}/v1` });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report.ok).toBe(false);
    const failed = report.checks.filter((c) => c.status === 'fail');
    expect(failed.map((c) => c.name)).toEqual(['mqtt port', 'llm']);
    expect(failed[0]).toMatchObject({ detail: `127.0.0.1:${env.HOMECLAW_MQTT_PORT} is in use`, fix: expect.stringContaining('HOMECLAW_MQTT_PORT') });
    expect(failed[1]).toMatchObject({ detail: expect.stringContaining('ECONNREFUSED'), fix: expect.stringContaining('HOMECLAW_LLM_BASE_URL') });
  }, 60_000);

  it('an invalid config file: the text report shows the problem and its fix, exit code 1', async () => {
    const env = await freshEnv();
    const file = join(env.HOMECLAW_DATA_DIR!, 'homeclaw.yaml');
    writeFileSync(file, 'http:\n  prot: 8765\n');
    const result = await doctor(['--config', file], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL {2}config {2}invalid configuration:$/m);
    expect(result.stdout).toContain('/http/prot: unknown setting');
    expect(result.stdout).toMatch(/^ {14}fix: correct the settings listed/m);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('1 check failed.');
  }, 60_000);
});
