// A real Prometheus (Debian's prometheus 2.x) scrapes a real Core with the scrape job the README gives,
// the metrics token in a credentials file: the target is up and HomeClaw's series are queryable. The same
// job with a wrong token is down with a 401.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify } from 'yaml';
import { REPO_ROOT } from '../e2e/helpers.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { freePort } from '../helpers/ports.js';

const METRICS_TOKEN = 'prometheus-scraper-0123456789';

interface ScrapeJob {
  job_name: string;
  metrics_path?: string;
  authorization?: { type?: string; credentials_file?: string };
  static_configs: { targets: string[] }[];
}

/** The yaml block of the README's Metrics section that holds scrape_configs. */
function readmeScrapeJob(): ScrapeJob {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Metrics'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('no yaml block in the README Metrics section');
  const parsed = parseYaml(block) as { scrape_configs: ScrapeJob[] };
  expect(parsed.scrape_configs).toHaveLength(1);
  return parsed.scrape_configs[0]!;
}

let core: TestCore;
let prometheus: ChildProcess;
let promUrl: string;
let dir: string;
let promLog = '';

beforeAll(async () => {
  core = await startTestCore({ overrides: { metrics: { token: METRICS_TOKEN } } });
  dir = mkdtempSync(join(tmpdir(), 'homeclaw-prometheus-'));
  const job = readmeScrapeJob();
  const target = new URL(core.httpUrl).host;
  const good = join(dir, 'homeclaw.token');
  const wrong = join(dir, 'wrong.token');
  writeFileSync(good, `${METRICS_TOKEN}\n`);
  writeFileSync(wrong, 'not-the-metrics-token-0123\n');
  const withTarget = (name: string, credentials: string): ScrapeJob => ({
    ...job,
    job_name: name,
    authorization: { ...job.authorization, credentials_file: credentials },
    static_configs: [{ targets: [target] }],
  });
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s' },
    scrape_configs: [withTarget(job.job_name, good), withTarget('homeclaw-wrong-token', wrong)],
  };
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prometheus.stdout?.on('data', (chunk: Buffer) => (promLog += chunk.toString()));
  prometheus.stderr?.on('data', (chunk: Buffer) => (promLog += chunk.toString()));
}, 60_000);

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await core?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Target {
  labels: { job: string };
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

async function targets(): Promise<Target[]> {
  try {
    const response = await fetch(`${promUrl}/api/v1/targets?state=active`);
    if (!response.ok) return [];
    return ((await response.json()) as { data: { activeTargets: Target[] } }).data.activeTargets;
  } catch {
    return []; // Prometheus still starting
  }
}

async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const response = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  expect(response.status, promLog).toBe(200);
  return ((await response.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
}

describe('Prometheus scraping the Core with the README scrape job', () => {
  it('finds the target up and stores the homeclaw_ series; a wrong token leaves its target down with a 401', async () => {
    const health = async (job: string): Promise<string | undefined> => (await targets()).find((t) => t.labels.job === job)?.health;
    await expect.poll(() => health('homeclaw'), { timeout: 30_000, interval: 250 }).toBe('up');
    await expect.poll(() => health('homeclaw-wrong-token'), { timeout: 30_000, interval: 250 }).toBe('down');
    const wrong = (await targets()).find((t) => t.labels.job === 'homeclaw-wrong-token')!;
    expect(wrong.lastError).toMatch(/401/);

    const build = await query('homeclaw_build_info{job="homeclaw"}');
    expect(build).toHaveLength(1);
    expect(build[0]!.metric).toMatchObject({ job: 'homeclaw', node_version: process.version });
    expect(build[0]!.value[1]).toBe('1');
    const plugins = await query('sum(homeclaw_plugins{job="homeclaw"})');
    expect(plugins).toHaveLength(1);
    // The standard process metrics arrive under their usual names.
    expect(await query('process_resident_memory_bytes{job="homeclaw"}')).toHaveLength(1);
  }, 60_000);
});
