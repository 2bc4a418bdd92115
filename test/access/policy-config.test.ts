// The access and policy settings in the config file: validated with every problem and its path, so a
// typo in a policy never silently opens or closes a door.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

function load(yaml: string) {
  const file = join(mkdtempSync(join(tmpdir(), 'homeclaw-policy-')), 'homeclaw.yaml');
  writeFileSync(file, yaml);
  return loadConfig({ env: {}, file });
}

describe('policy and access in the config', () => {
  it('accepts users, a default, confirmation patterns and channel bindings', () => {
    const loaded = load(`
policy:
  default: { allow: [time, weather] }
  users:
    kid: { deny: [lock, "*.delete_*"] }
    bob@home: { allow: [lock.status] }
  require_confirmation: [garage.open]
access:
  channels:
    kitchen: { users: [alice, bob] }
    dev: { users: ["*"] }
  audit: { max_entries: 5000 }
`);
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.config.policy.users['kid']).toEqual({ deny: ['lock', '*.delete_*'] });
    expect(loaded.config.access.audit).toEqual({ max_entries: 5000, max_age_days: 90, flush_interval_ms: 1000 });
  });

  it('reports every bad pattern, user id, channel name and unknown key with its path', () => {
    const loaded = load(`
policy:
  users:
    kid: { deny: [Lock, "lock/unlock"], allowed: [x] }
    "not valid!": { deny: [lock] }
  require_confirmation: ["a.b.c"]
access:
  channels:
    Kitchen: { users: [alice] }
    hall: { users: ["bad user!"] }
  audit: { max_entries: 1 }
`);
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const paths = loaded.errors.map((e) => e.path);
    expect(paths.sort()).toEqual(
      [
        '/access/audit/max_entries',
        '/access/channels/Kitchen',
        '/access/channels/hall/users/0',
        '/policy/require_confirmation/0',
        '/policy/users/kid/allowed',
        '/policy/users/kid/deny/0',
        '/policy/users/kid/deny/1',
        '/policy/users/not valid!',
      ].sort(),
    );
    expect(loaded.errors.find((e) => e.path === '/policy/users/not valid!')?.message).toMatch(/^invalid name/);
  });
});
