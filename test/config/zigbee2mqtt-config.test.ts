import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

describe('zigbee2mqtt settings', () => {
  it('default to off, base topic zigbee2mqtt, 5 s confirmation', () => {
    const loaded = loadConfig({ env: {} });
    expect(loaded.ok && loaded.config.zigbee2mqtt).toEqual({ enabled: false, base_topic: 'zigbee2mqtt', confirm_timeout_sec: 5 });
  });

  it('are overridden by HOMECLAW_Z2M_* variables', () => {
    const loaded = loadConfig({ env: { HOMECLAW_Z2M_ENABLED: 'true', HOMECLAW_Z2M_BASE_TOPIC: 'home/zigbee', HOMECLAW_Z2M_CONFIRM_TIMEOUT_SEC: '2.5' } });
    expect(loaded.ok && loaded.config.zigbee2mqtt).toEqual({ enabled: true, base_topic: 'home/zigbee', confirm_timeout_sec: 2.5 });
  });

  it.each([
    [{ HOMECLAW_Z2M_BASE_TOPIC: 'zigbee2mqtt/#' }, '/zigbee2mqtt/base_topic'],
    [{ HOMECLAW_Z2M_BASE_TOPIC: 'zigbee2mqtt/' }, '/zigbee2mqtt/base_topic'],
    [{ HOMECLAW_Z2M_BASE_TOPIC: '$SYS' }, '/zigbee2mqtt/base_topic'],
    [{ HOMECLAW_Z2M_BASE_TOPIC: 'homeclaw' }, '/zigbee2mqtt/base_topic'],
    [{ HOMECLAW_Z2M_BASE_TOPIC: 'homeclaw/zigbee' }, '/zigbee2mqtt/base_topic'],
    [{ HOMECLAW_Z2M_CONFIRM_TIMEOUT_SEC: '0' }, '/zigbee2mqtt/confirm_timeout_sec'],
    [{ HOMECLAW_Z2M_CONFIRM_TIMEOUT_SEC: 'soon' }, 'env:HOMECLAW_Z2M_CONFIRM_TIMEOUT_SEC'],
    [{ HOMECLAW_Z2M_ENABLED: 'maybe' }, 'env:HOMECLAW_Z2M_ENABLED'],
  ])('refuses %j with an error at %s', (env, path) => {
    const loaded = loadConfig({ env });
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.errors.map((e) => e.path)).toContain(path);
  });

  it('accepts a base topic of several levels that merely starts like homeclaw', () => {
    const loaded = loadConfig({ env: { HOMECLAW_Z2M_BASE_TOPIC: 'homeclawz/zigbee' } });
    expect(loaded.ok).toBe(true);
  });
});
