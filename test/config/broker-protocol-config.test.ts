import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

function fromFile(yaml: string) {
  const file = join(mkdtempSync(join(tmpdir(), 'homeclaw-config-')), 'homeclaw.yaml');
  writeFileSync(file, yaml);
  return loadConfig({ env: {}, file });
}

describe('broker.protocol_version', () => {
  it('defaults to MQTT 5', () => {
    const loaded = loadConfig({ env: {} });
    expect(loaded.ok && loaded.config.broker.protocol_version).toBe(5);
  });

  it('is 5 or 3.1.1 in the file', () => {
    const five = fromFile('broker:\n  protocol_version: 5\n');
    expect(five.ok && five.config.broker.protocol_version).toBe(5);
    const old = fromFile('broker:\n  protocol_version: 3.1.1\n');
    expect(old.ok && old.config.broker.protocol_version).toBe('3.1.1');
  });

  it('is set by HOMECLAW_BROKER_PROTOCOL_VERSION', () => {
    const old = loadConfig({ env: { HOMECLAW_BROKER_PROTOCOL_VERSION: '3.1.1' } });
    expect(old.ok && old.config.broker.protocol_version).toBe('3.1.1');
    const five = loadConfig({ env: { HOMECLAW_BROKER_PROTOCOL_VERSION: '5' } });
    expect(five.ok && five.config.broker.protocol_version).toBe(5);
  });

  it.each([
    ['broker:\n  protocol_version: 4\n', '/broker/protocol_version'],
    ['broker:\n  protocol_version: "3"\n', '/broker/protocol_version'],
  ])('refuses %j at %s', (yaml, path) => {
    const loaded = fromFile(yaml);
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.errors.map((e) => e.path)).toContain(path);
  });

  it('refuses another version in the environment, naming the variable and the allowed values', () => {
    const loaded = loadConfig({ env: { HOMECLAW_BROKER_PROTOCOL_VERSION: '4' } });
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.errors).toContainEqual({ path: 'env:HOMECLAW_BROKER_PROTOCOL_VERSION', message: 'must be 5 or 3.1.1, got "4"' });
  });
});
