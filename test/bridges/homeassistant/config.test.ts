// The homeassistant section of the config: environment variables, defaults and clear errors.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';

describe('homeassistant config', () => {
  it('defaults to no Home Assistant and no discovery', () => {
    const loaded = loadConfig({ env: {} });
    expect(loaded.ok && loaded.config.homeassistant).toEqual({
      url: null,
      token: null,
      refresh_sec: 300,
      timeout_sec: 15,
      discovery: false,
      discovery_prefix: 'homeassistant',
    });
  });

  it('reads HOMECLAW_HA_URL, _TOKEN, _DISCOVERY, _DISCOVERY_PREFIX and _REFRESH_SEC', () => {
    const loaded = loadConfig({
      env: {
        HOMECLAW_HA_URL: 'http://ha.local:8123',
        HOMECLAW_HA_TOKEN: 'tok',
        HOMECLAW_HA_DISCOVERY: 'yes',
        HOMECLAW_HA_DISCOVERY_PREFIX: 'ha2',
        HOMECLAW_HA_REFRESH_SEC: '60',
      },
    });
    expect(loaded.ok && loaded.config.homeassistant).toMatchObject({
      url: 'http://ha.local:8123',
      token: 'tok',
      discovery: true,
      discovery_prefix: 'ha2',
      refresh_sec: 60,
    });
  });

  it('refuses a URL that is not http(s), a prefix of several topic levels, a too-eager refresh and a bad boolean, each with its path', () => {
    const loaded = loadConfig({
      env: { HOMECLAW_HA_DISCOVERY: 'sure' },
      overrides: { homeassistant: { url: 'ha.local:8123', discovery_prefix: 'home/assistant', refresh_sec: 1 } },
    });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const paths = loaded.errors.map((e) => e.path).sort();
    expect(paths).toEqual(['/homeassistant/discovery_prefix', '/homeassistant/refresh_sec', '/homeassistant/url', 'env:HOMECLAW_HA_DISCOVERY'].sort());
  });
});
