// Password checks for MQTT logins, safe against floods. Each check is a deliberately slow scrypt hash, so
// a stream of wrong passwords could queue every real login behind it. Three rules keep real plugins in:
// - a source address that keeps failing is refused without a check, for a backoff that doubles with
//   every further failure (up to a ceiling);
// - only a few checks run at once, taken in turn from each address waiting, so one address's flood
//   never delays another's login; each address may have only a few checks pending;
// - a credential verified a moment ago is recognised without hashing again. The cache key is an HMAC
//   of name and password under a key that exists only in this process, so the plaintext is never
//   kept, and an entry counts only while the stored credential is unchanged (not removed, not rotated).
import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import type { CredentialInfo, CredentialVerifier } from './credentials.js';

export interface LoginLimits {
  /** Failed checks from one address before it backs off. */
  max_failures: number;
  /** First backoff; each further failure doubles it. */
  backoff_sec: number;
  max_backoff_sec: number;
  /** Password checks running at once. */
  max_concurrent_checks: number;
  /** How long a verified credential is recognised without a new hash; 0 disables the cache. */
  cache_ttl_sec: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { max_failures: 5, backoff_sec: 1, max_backoff_sec: 60, max_concurrent_checks: 2, cache_ttl_sec: 300 };

export type LoginOutcome =
  | { ok: true; credential: CredentialInfo; cached: boolean }
  | { ok: false; reason: 'bad_credentials' }
  | { ok: false; reason: 'backoff' | 'busy'; retry_after_ms: number };

interface AddressState {
  failures: number;
  blocked_until: number;
  last_failure: number;
}

interface CacheEntry {
  name: string;
  fingerprint: string;
  expires: number;
}

/** Checks one address may have waiting or running; more are refused at once. */
const MAX_PENDING_PER_ADDRESS = 4;
/** Checks waiting in all; beyond this the broker is too busy to accept a login. */
const MAX_WAITING = 512;
const MAX_TRACKED_ADDRESSES = 10_000;
const MAX_CACHE_ENTRIES = 1_000;

/** IPv4 clients on a dual-stack listener appear as ::ffff:a.b.c.d; both forms are one address. */
export function normalizeAddress(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export class LoginGuard {
  private readonly limits: LoginLimits;
  private readonly now: () => number;
  private readonly cacheKey = randomBytes(32);
  private readonly cache = new Map<string, CacheEntry>();
  private readonly addresses = new Map<string, AddressState>();
  /** Waiting checks per address. */
  private readonly waiting = new Map<string, (() => void)[]>();
  /** Checks running per address: the next free slot goes to the waiting address running fewest. */
  private readonly runningBy = new Map<string, number>();
  private readonly pending = new Map<string, number>();
  private waitingCount = 0;
  private running = 0;
  readonly counters = { checked: 0, cache_hits: 0, refused_backoff: 0, refused_busy: 0 };

  constructor(
    private readonly verifier: CredentialVerifier,
    private readonly log: Logger,
    limits: Partial<LoginLimits> = {},
    now: () => number = Date.now,
  ) {
    this.limits = { ...DEFAULT_LOGIN_LIMITS, ...limits };
    this.now = now;
  }

  async login(rawAddress: string | undefined, name: string, password: string): Promise<LoginOutcome> {
    const address = normalizeAddress(rawAddress);
    const cached = this.fromCache(name, password);
    // A password that matched a moment ago is no guess: it is let in even while its address backs off.
    if (cached) {
      this.counters.cache_hits++;
      return { ok: true, credential: cached, cached: true };
    }
    const state = this.addresses.get(address);
    const now = this.now();
    if (state && state.blocked_until > now) {
      this.counters.refused_backoff++;
      return { ok: false, reason: 'backoff', retry_after_ms: state.blocked_until - now };
    }
    const pendingHere = this.pending.get(address) ?? 0;
    if (pendingHere >= MAX_PENDING_PER_ADDRESS || this.waitingCount >= MAX_WAITING) {
      this.counters.refused_busy++;
      return { ok: false, reason: 'busy', retry_after_ms: this.limits.backoff_sec * 1000 };
    }
    this.pending.set(address, pendingHere + 1);
    try {
      await this.acquire(address);
      try {
        return await this.check(address, name, password);
      } finally {
        this.release(address);
      }
    } finally {
      const left = (this.pending.get(address) ?? 1) - 1;
      if (left > 0) this.pending.set(address, left);
      else this.pending.delete(address);
    }
  }

  private async check(address: string, name: string, password: string): Promise<LoginOutcome> {
    // A login that waited may find its address blocked meanwhile by the other checks from it.
    const state = this.addresses.get(address);
    if (state && state.blocked_until > this.now()) {
      this.counters.refused_backoff++;
      return { ok: false, reason: 'backoff', retry_after_ms: state.blocked_until - this.now() };
    }
    this.counters.checked++;
    const before = this.verifier.fingerprint?.(name);
    const credential = await this.verifier.verify(name, password);
    if (!credential) {
      this.recordFailure(address);
      return { ok: false, reason: 'bad_credentials' };
    }
    this.addresses.delete(address);
    // Cached only when the credential did not change while it was being checked.
    if (before !== undefined && before === this.verifier.fingerprint?.(name)) this.remember(name, password, before);
    return { ok: true, credential, cached: false };
  }

  private recordFailure(address: string): void {
    const now = this.now();
    if (this.addresses.size >= MAX_TRACKED_ADDRESSES && !this.addresses.has(address)) this.forgetOldAddresses(now);
    const state = this.addresses.get(address) ?? { failures: 0, blocked_until: 0, last_failure: 0 };
    state.failures++;
    state.last_failure = now;
    this.addresses.set(address, state);
    const over = state.failures - this.limits.max_failures;
    if (over < 0) return;
    const seconds = Math.min(this.limits.max_backoff_sec, this.limits.backoff_sec * 2 ** Math.min(over, 30));
    state.blocked_until = now + seconds * 1000;
    this.log.warn({ address, failures: state.failures, backoff_sec: seconds }, `failed logins from ${address}: backing off for ${seconds} s`);
  }

  private forgetOldAddresses(now: number): void {
    const horizon = now - Math.max(600, this.limits.max_backoff_sec * 10) * 1000;
    for (const [address, state] of this.addresses) {
      if (state.blocked_until < now && state.last_failure < horizon) this.addresses.delete(address);
    }
    // Still full (a flood from very many addresses): the oldest half goes.
    if (this.addresses.size >= MAX_TRACKED_ADDRESSES) {
      let drop = this.addresses.size / 2;
      for (const address of this.addresses.keys()) {
        if (drop-- <= 0) break;
        this.addresses.delete(address);
      }
    }
  }

  private keyOf(name: string, password: string): string {
    return createHmac('sha256', this.cacheKey).update(name).update('\0').update(password).digest('base64');
  }

  private fromCache(name: string, password: string): CredentialInfo | undefined {
    if (this.limits.cache_ttl_sec <= 0 || this.cache.size === 0 || !this.verifier.fingerprint) return undefined;
    const key = this.keyOf(name, password);
    const entry = this.cache.get(key);
    if (!entry) return undefined;
    const current = entry.expires > this.now() && entry.name === name ? this.verifier.fingerprint(name) : undefined;
    if (current === undefined || current !== entry.fingerprint) {
      this.cache.delete(key);
      return undefined;
    }
    // Read again: what the credential may do can have changed since it was cached.
    return this.verifier.get?.(name);
  }

  private remember(name: string, password: string, fingerprint: string): void {
    if (this.limits.cache_ttl_sec <= 0) return;
    if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(this.keyOf(name, password), { name, fingerprint, expires: this.now() + this.limits.cache_ttl_sec * 1000 });
  }

  private acquire(address: string): Promise<void> {
    if (this.running < this.limits.max_concurrent_checks) {
      this.running++;
      this.runningBy.set(address, (this.runningBy.get(address) ?? 0) + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(address);
      if (queue) queue.push(resolve);
      else this.waiting.set(address, [resolve]);
      this.waitingCount++;
    });
  }

  /**
   * Hands the slot to the waiting address with the fewest checks running (the longest waiting among
   * equals, which then moves to the back), or frees it.
   */
  private release(address: string): void {
    const left = (this.runningBy.get(address) ?? 1) - 1;
    if (left > 0) this.runningBy.set(address, left);
    else this.runningBy.delete(address);
    let next: string | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    for (const candidate of this.waiting.keys()) {
      const running = this.runningBy.get(candidate) ?? 0;
      if (running < fewest) {
        next = candidate;
        fewest = running;
        if (running === 0) break;
      }
    }
    if (next === undefined) {
      this.running--;
      return;
    }
    const queue = this.waiting.get(next)!;
    const resolve = queue.shift();
    this.waiting.delete(next);
    if (queue.length > 0) this.waiting.set(next, queue);
    this.waitingCount--;
    this.runningBy.set(next, fewest + 1);
    resolve?.();
  }
}
