// The metrics settings: environment variables, validation with clear paths, and a Core without metrics.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startTestCore, type TestCore } from '../helpers/core.js';

let core: TestCore | undefined;
afterEach(async () => {
  await core?.cleanup();
  core = undefined;
});

describe('metrics settings', () => {
  it('reads HOMECLAW_METRICS_TOKEN and HOMECLAW_METRICS_ENABLED; defaults: on, no token, 1000 series', () => {
    const defaults = loadConfig({ env: {} });
    expect(defaults.ok && defaults.config.metrics).toEqual({ enabled: true, token: null, max_series: 1000 });
    const fromEnv = loadConfig({ env: { HOMECLAW_METRICS_TOKEN: 'a-scraper-token-of-20', HOMECLAW_METRICS_ENABLED: 'false' } });
    expect(fromEnv.ok && fromEnv.config.metrics).toEqual({ enabled: false, token: 'a-scraper-token-of-20', max_series: 1000 });
  });

  it('refuses a short token, a series cap below 1 and unknown keys, each with its path', () => {
    const loaded = loadConfig({ env: { HOMECLAW_METRICS_ENABLED: 'maybe' }, overrides: { metrics: { token: 'short', max_series: 0, tokens: [] } } });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const paths = loaded.errors.map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['env:HOMECLAW_METRICS_ENABLED']));
    const fromFile = loadConfig({ env: {}, overrides: { metrics: { token: 'short', max_series: 0, tokens: [] } } });
    expect(fromFile.ok).toBe(false);
    if (fromFile.ok) return;
    expect(fromFile.errors).toEqual(
      expect.arrayContaining([
        { path: '/metrics/tokens', message: 'unknown setting' },
        { path: '/metrics/token', message: 'must NOT have fewer than 16 characters' },
        { path: '/metrics/max_series', message: 'must be >= 1' },
      ]),
    );
    expect(fromFile.errors).toHaveLength(3);
  });

  it('metrics.enabled: false leaves no /metrics route and nothing counting', async () => {
    core = await startTestCore({ overrides: { metrics: { enabled: false } } });
    const response = await fetch(`${core.httpUrl}/metrics`, { headers: { authorization: `Bearer ${core.adminToken}` } });
    expect(response.status).toBe(404);
    expect(core.ctx.metrics).toBeUndefined();
    expect((await core.api('GET', '/api/status')).status).toBe(200);
  });
});
