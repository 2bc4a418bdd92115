// The rules of the login guard, with a verifier whose checks finish when the test says so.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CredentialInfo, CredentialVerifier } from '../../src/bus/credentials.js';
import { LoginGuard, normalizeAddress } from '../../src/bus/login-guard.js';
import { silentLogger } from '../../src/log.js';

const info = (name: string): CredentialInfo => ({ name, role: 'plugin', plugin_ids: [name], channels: [name], created_at: 0 });

/** Passwords by name; every check waits for release() so concurrency can be observed. */
class FakeVerifier implements CredentialVerifier {
  passwords: Record<string, string> = { lamp: 'right', fan: 'fan-right' };
  running = 0;
  maxRunning = 0;
  checks: string[] = [];
  auto = true;
  private waiting: (() => void)[] = [];

  async verify(name: string, password: string): Promise<CredentialInfo | null> {
    this.checks.push(`${name}:${password}`);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    if (!this.auto) await new Promise<void>((r) => this.waiting.push(r));
    this.running--;
    return this.passwords[name] === password ? info(name) : null;
  }
  fingerprint(name: string): string | undefined {
    const password = this.passwords[name];
    return password === undefined ? undefined : createHash('sha256').update(password).digest('hex');
  }
  get(name: string): CredentialInfo | undefined {
    return this.passwords[name] === undefined ? undefined : info(name);
  }
  releaseOne(): void {
    this.waiting.shift()?.();
  }
  get queued(): number {
    return this.waiting.length;
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('LoginGuard', () => {
  it('backs an address off after max_failures, doubling up to the ceiling, and forgives on success', async () => {
    let now = 1_000_000;
    const verifier = new FakeVerifier();
    const guard = new LoginGuard(verifier, silentLogger(), { max_failures: 3, backoff_sec: 1, max_backoff_sec: 4, cache_ttl_sec: 0 }, () => now);
    for (let i = 0; i < 2; i++) expect(await guard.login('10.0.0.9', 'lamp', 'bad')).toEqual({ ok: false, reason: 'bad_credentials' });
    expect(await guard.login('10.0.0.9', 'lamp', 'bad')).toEqual({ ok: false, reason: 'bad_credentials' });
    // Third failure: 1 s of backoff, during which not even the right password is checked.
    const checks = verifier.checks.length;
    expect(await guard.login('10.0.0.9', 'lamp', 'right')).toEqual({ ok: false, reason: 'backoff', retry_after_ms: 1000 });
    expect(verifier.checks.length).toBe(checks);
    // Another address is not affected.
    expect(await guard.login('10.0.0.10', 'lamp', 'right')).toMatchObject({ ok: true, cached: false });
    const backoffs: number[] = [];
    for (let i = 0; i < 4; i++) {
      now += 10_000;
      await guard.login('10.0.0.9', 'lamp', 'bad');
      const refused = await guard.login('10.0.0.9', 'lamp', 'bad');
      backoffs.push(refused.ok === false && refused.reason === 'backoff' ? refused.retry_after_ms : -1);
    }
    expect(backoffs).toEqual([2000, 4000, 4000, 4000]);
    now += 10_000;
    expect(await guard.login('10.0.0.9', 'lamp', 'right')).toMatchObject({ ok: true });
    expect(await guard.login('10.0.0.9', 'lamp', 'bad')).toEqual({ ok: false, reason: 'bad_credentials' });
  });

  it('recognises a verified password without a new check, until the credential changes or the entry expires', async () => {
    let now = 0;
    const verifier = new FakeVerifier();
    const guard = new LoginGuard(verifier, silentLogger(), { cache_ttl_sec: 60, max_failures: 1 }, () => now);
    expect(await guard.login('10.0.0.1', 'lamp', 'right')).toMatchObject({ ok: true, cached: false });
    expect(await guard.login('10.0.0.1', 'lamp', 'right')).toMatchObject({ ok: true, cached: true });
    expect(verifier.checks).toEqual(['lamp:right']);
    // A wrong password is never answered from the cache, and the cache is no way around a backoff for guesses.
    expect(await guard.login('10.0.0.1', 'lamp', 'wrong')).toEqual({ ok: false, reason: 'bad_credentials' });
    expect(await guard.login('10.0.0.1', 'lamp', 'other')).toMatchObject({ ok: false, reason: 'backoff' });
    // ...but the known password still gets in from the backing-off address.
    expect(await guard.login('10.0.0.1', 'lamp', 'right')).toMatchObject({ ok: true, cached: true });
    // Rotated: the old password is checked again, and fails.
    verifier.passwords.lamp = 'rotated';
    expect(await guard.login('10.0.0.2', 'lamp', 'right')).toEqual({ ok: false, reason: 'bad_credentials' });
    expect(await guard.login('10.0.0.3', 'lamp', 'rotated')).toMatchObject({ ok: true, cached: false });
    now += 61_000;
    expect(await guard.login('10.0.0.3', 'lamp', 'rotated')).toMatchObject({ ok: true, cached: false });
    // Removed: no entry survives it.
    delete verifier.passwords.lamp;
    expect(await guard.login('10.0.0.3', 'lamp', 'rotated')).toEqual({ ok: false, reason: 'bad_credentials' });
  });

  it('keeps no plaintext password in memory', async () => {
    const guard = new LoginGuard(new FakeVerifier(), silentLogger());
    await guard.login('10.0.0.1', 'lamp', 'right');
    const cache = (guard as unknown as { cache: Map<string, unknown> }).cache;
    expect(cache.size).toBe(1);
    expect(JSON.stringify([...cache])).not.toContain('right');
  });

  it('runs at most max_concurrent_checks at once, in turn across addresses, and few per address', async () => {
    const verifier = new FakeVerifier();
    verifier.auto = false;
    const guard = new LoginGuard(verifier, silentLogger(), { max_concurrent_checks: 2, max_failures: 100, cache_ttl_sec: 0 });
    const flood = Array.from({ length: 10 }, () => guard.login('10.0.0.66', 'lamp', 'bad'));
    const refused = (await Promise.race([Promise.all(flood.slice(4)), tick().then(() => null)])) ?? [];
    // Only four checks of one address may be pending; the rest are refused at once.
    expect(refused).toEqual(Array.from({ length: 6 }, () => ({ ok: false, reason: 'busy', retry_after_ms: 1000 })));
    const real = guard.login('10.0.0.7', 'fan', 'fan-right');
    await tick();
    expect(verifier.running).toBe(2);
    // The next free slot goes to the waiting address that has not had a turn, not to the flood.
    verifier.releaseOne();
    await tick();
    expect(verifier.checks.at(-1)).toBe('fan:fan-right');
    verifier.releaseOne();
    verifier.releaseOne();
    expect(await real).toMatchObject({ ok: true });
    while (verifier.queued > 0 || verifier.running > 0) {
      verifier.releaseOne();
      await tick();
    }
    await Promise.all(flood);
    expect(verifier.maxRunning).toBe(2);
  });

  it('treats IPv4-mapped IPv6 addresses as the IPv4 address', () => {
    expect(normalizeAddress('::ffff:192.168.1.5')).toBe('192.168.1.5');
    expect(normalizeAddress('fe80::1')).toBe('fe80::1');
    expect(normalizeAddress(undefined)).toBe('unknown');
  });
});
