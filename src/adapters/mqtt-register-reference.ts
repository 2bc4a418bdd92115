// Registration by reference: a small device publishes `{id, epoch, descriptor_url}` (a few dozen bytes,
// where a full descriptor would not fit its packet buffer) and the Core fetches the descriptor over HTTP,
// then registers it exactly as if the device had sent it. The id is checked before anything is fetched,
// so a client cannot make the Core fetch for an id it may not use; fetches are bounded in number, and
// a device repeating its registration while the Core still fetches does not start a second fetch.
import type { IncomingMessage, PublisherIdentity } from '../bus/core-bus.js';
import type { Logger } from '../log.js';
import { claimedPluginId } from '../protocol/descriptor/register-message.js';
import { explainBadId, isPluginId } from '../protocol/ids.js';
import type { ValidationIssue } from '../protocol/types.js';
import { validatePayload } from '../protocol/validate.js';
import type { FetchedDescriptor } from './descriptor-fetch.js';

export interface ReferenceRegistrationDeps {
  /** Absent: registration by reference is not offered, and such a registration is refused saying so. */
  fetcher?: { fetch(url: string): Promise<FetchedDescriptor> };
  log: Logger;
  mayUsePluginId?: (publisher: PublisherIdentity | undefined, pluginId: string) => boolean;
  /** Answers the registration with errors (replyOnInvalid: on the shared _invalid topic). */
  reject(pluginId: string | null, errors: ValidationIssue[], message: IncomingMessage, replyOnInvalid?: boolean): Promise<void>;
  /** Registers the fetched descriptor with the reference's liveness fields; `origin` is the URL. */
  register(message: IncomingMessage, body: Record<string, unknown>, origin: string): void;
}

const REFERENCE_KEYS: ReadonlySet<string> = new Set(['id', 'plugin_id', 'epoch', 'descriptor_url', 'heartbeat_interval_sec']);
/** Descriptor fetches running at once, and waiting beyond those: a flood of references is refused, not queued without end. */
const MAX_RUNNING = 4;
const MAX_WAITING = 64;

interface Pending {
  message: IncomingMessage;
  body: Record<string, unknown>;
}

export function isReference(body: Record<string, unknown>): boolean {
  return body['descriptor_url'] !== undefined;
}

export class ReferenceRegistrations {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Per plugin id, the newest reference received while its descriptor is being fetched. */
  private readonly fetching = new Map<string, Pending>();

  constructor(private readonly deps: ReferenceRegistrationDeps) {}

  async resolve(message: IncomingMessage, body: Record<string, unknown>): Promise<void> {
    const rawId = typeof body['id'] === 'string' ? body['id'] : typeof body['plugin_id'] === 'string' ? body['plugin_id'] : null;
    const errors = this.envelopeProblems(body, rawId);
    const forbidden = isPluginId(rawId) && this.deps.mayUsePluginId !== undefined && !this.deps.mayUsePluginId(message.publisher, rawId);
    if (forbidden) errors.push({ path: '/id', message: `this client's credentials do not allow the plugin id "${rawId}"` });
    if (errors.length > 0 || !isPluginId(rawId)) return this.deps.reject(rawId, errors, message, forbidden);
    if (!this.deps.fetcher) {
      return this.deps.reject(
        rawId,
        [{ path: '/descriptor_url', message: 'registration by reference is not available on this Core; send the descriptor itself' }],
        message,
      );
    }
    const pending = this.fetching.get(rawId);
    if (pending) {
      // The device asked again while its descriptor is on the way: that fetch answers both.
      pending.message = message;
      pending.body = body;
      return;
    }
    if (this.running >= MAX_RUNNING && this.waiting.length >= MAX_WAITING) {
      return this.deps.reject(
        rawId,
        [{ path: '/descriptor_url', message: `the Core is fetching ${MAX_RUNNING + MAX_WAITING} descriptors already; try again in a few seconds` }],
        message,
      );
    }
    const entry: Pending = { message, body };
    this.fetching.set(rawId, entry);
    const url = body['descriptor_url'] as string;
    let fetched: FetchedDescriptor;
    await this.slot();
    try {
      fetched = await this.deps.fetcher.fetch(url);
    } finally {
      this.release();
      this.fetching.delete(rawId);
    }
    if (!fetched.ok) {
      this.deps.log.warn({ plugin_id: rawId, descriptor_url: url, error: fetched.error }, 'descriptor of a registration by reference not fetched');
      return this.deps.reject(rawId, [{ path: '/descriptor_url', message: fetched.error }], entry.message);
    }
    const claimed = claimedPluginId(fetched.document);
    if (claimed !== null && claimed !== rawId) {
      return this.deps.reject(
        rawId,
        [{ path: '/descriptor_url', message: `the descriptor at ${url} is for plugin "${claimed}", not "${rawId}"` }],
        entry.message,
      );
    }
    // Liveness comes from the device's message, never from the document.
    const { epoch: _epoch, heartbeat_interval_sec: _interval, descriptor_url: _url, ...descriptor } = fetched.document;
    const merged: Record<string, unknown> = { ...descriptor, ...(claimed === null ? { id: rawId } : {}), epoch: entry.body['epoch'] };
    if (entry.body['heartbeat_interval_sec'] !== undefined) merged['heartbeat_interval_sec'] = entry.body['heartbeat_interval_sec'];
    this.deps.log.info({ plugin_id: rawId, descriptor_url: url }, 'descriptor fetched for a registration by reference');
    this.deps.register(entry.message, merged, url);
  }

  private envelopeProblems(body: Record<string, unknown>, rawId: string | null): ValidationIssue[] {
    const errors: ValidationIssue[] = [];
    const envelope = validatePayload('register', body);
    if (!envelope.ok) errors.push(...envelope.errors);
    if (rawId === null) errors.push({ path: '/id', message: 'id is required: the id of the plugin the descriptor at descriptor_url describes' });
    else if (!isPluginId(rawId)) errors.push({ path: body['id'] !== undefined ? '/id' : '/plugin_id', message: explainBadId(rawId) });
    const extra = Object.keys(body).filter((key) => !REFERENCE_KEYS.has(key));
    if (extra.length > 0) {
      errors.push({
        path: '/descriptor_url',
        message: `a registration by reference carries only id, epoch, descriptor_url and heartbeat_interval_sec (the descriptor comes from the URL); remove ${extra.join(', ')}`,
      });
    }
    return errors;
  }

  private slot(): Promise<void> {
    if (this.running < MAX_RUNNING) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
