import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { loadConfig } from '../../src/config/load.js';

const root = resolve(import.meta.dirname, '..', '..');

function tempFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'homeclaw-config-')), 'homeclaw.yaml');
  writeFileSync(file, text);
  return file;
}

describe('loadConfig', () => {
  it('gives the embedded defaults without a file, with the package plugins folder', () => {
    const loaded = loadConfig({ env: {}, cwd: '/srv/home' });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.broker).toEqual(DEFAULT_CONFIG.broker);
    expect(loaded.config.http.port).toBe(8765);
    expect(loaded.config.broker.port).toBe(1883);
    expect(loaded.config.broker.ws_port).toBe(9001);
    expect(loaded.config.data_dir).toBe('/srv/home/data');
    expect(loaded.config.plugins.dir).toBe(join(root, 'plugins'));
  });

  it('ships config/homeclaw.yaml whose values are exactly the embedded defaults', () => {
    const loaded = loadConfig({ env: {}, file: join(root, 'config', 'homeclaw.yaml'), cwd: root });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    const defaults = loadConfig({ env: {}, cwd: root });
    if (!defaults.ok) throw new Error('defaults invalid');
    expect({ ...loaded.config, plugins: { ...loaded.config.plugins, dir: '' } }).toEqual({
      ...defaults.config,
      plugins: { ...defaults.config.plugins, dir: '' },
      retrieval: { ...defaults.config.retrieval, retry_interval_sec: 10, dense_candidates: 400 },
    });
  });

  it('applies environment overrides over the file', () => {
    const file = tempFile('broker:\n  port: 1999\nhttp:\n  port: 9999\n');
    const loaded = loadConfig({
      file,
      cwd: '/x',
      env: {
        HOMECLAW_DATA_DIR: '/var/lib/homeclaw',
        HOMECLAW_MQTT_PORT: '2883',
        HOMECLAW_WS_PORT: '0',
        HOMECLAW_BROKER_URL: 'mqtt://ha.local:1883',
        HOMECLAW_ADMIN_TOKEN: 'a-long-enough-admin-token',
        HOMECLAW_LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      },
    });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.data_dir).toBe('/var/lib/homeclaw');
    expect(loaded.config.broker).toMatchObject({ port: 2883, ws_port: 0, url: 'mqtt://ha.local:1883' });
    expect(loaded.config.http).toMatchObject({ port: 9999, admin_token: 'a-long-enough-admin-token' });
    expect(loaded.config.llm.base_url).toBe('http://127.0.0.1:11434/v1');
  });

  it('reports every problem at once, each with its path', () => {
    const file = tempFile(
      [
        'broker:',
        '  port: 70000',
        '  colour: blue',
        'http:',
        '  port: "eighty"',
        'llm:',
        '  max_rounds: 0',
        'retrieval:',
        '  embedder:',
        '    kind: magic',
      ].join('\n'),
    );
    const loaded = loadConfig({ file, env: { HOMECLAW_HTTP_PORT: 'abc' } });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const paths = loaded.errors.map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['env:HOMECLAW_HTTP_PORT', '/broker/port', '/broker/colour', '/llm/max_rounds', '/retrieval/embedder/kind']));
    expect(loaded.errors.find((e) => e.path === '/broker/colour')?.message).toBe('unknown setting');
  });

  it('explains unreadable files and YAML syntax errors', () => {
    const missing = loadConfig({ file: '/nonexistent/homeclaw.yaml', env: {} });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.errors[0]?.message).toMatch(/cannot read the config file/);
    const broken = loadConfig({ file: tempFile('broker: [unclosed'), env: {} });
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.errors[0]?.message).toMatch(/YAML syntax error/);
  });
});
