// The registration queue's limits as the MQTT lifecycle applies them: which refusals are answered, and where.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { CoreBus, IncomingMessage, MessageHandler, PublishOptions } from '../../src/bus/core-bus.js';
import { loadConfig } from '../../src/config/load.js';
import { MqttLifecycle } from '../../src/liveness/mqtt-lifecycle.js';
import { silentLogger } from '../../src/log.js';
import { filters, topics } from '../../src/protocol/topics.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

/** An in-memory bus: records what the lifecycle publishes and lets the test deliver messages to it. */
class RecordingBus {
  readonly embedded = true;
  readonly published: { topic: string; payload: string; options?: PublishOptions }[] = [];
  private readonly handlers = new Map<string, MessageHandler>();
  async publish(topic: string, payload: string | Buffer, options?: PublishOptions): Promise<void> {
    this.published.push({ topic, payload: payload.toString(), ...(options ? { options } : {}) });
  }
  async subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    this.handlers.set(filter, handler);
    return async () => void this.handlers.delete(filter);
  }
  onClientDisconnect(): () => void {
    return () => {};
  }
  async close(): Promise<void> {}
  deliver(filter: string, message: IncomingMessage): void {
    void this.handlers.get(filter)?.(message);
  }
}

const registration = (id: string, clientId: string): IncomingMessage => ({
  topic: topics.register(),
  retain: false,
  publisher: { clientId },
  payload: Buffer.from(
    JSON.stringify({
      id,
      name: id,
      description: `Plugin ${id}.`,
      epoch: 1,
      heartbeat_interval_sec: 30,
      capabilities: [{ id: 'x', name: 'X', description: 'X.', parameters: [] }],
    }),
  ),
});

describe('MqttLifecycle: registrations over the queue limits', () => {
  it('answers a client over its own limit on _invalid (to it alone), stays silent over the total limits, and handles what it queued', async () => {
    const log = silentLogger();
    const config = loadConfig({ env: {}, overrides: {} });
    if (!config.ok) throw new Error('default config invalid');
    const bus = new RecordingBus();
    const registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(log), log });
    const lifecycle = new MqttLifecycle({
      bus: bus as unknown as CoreBus,
      registry,
      log,
      liveness: config.config.liveness,
      max_payload_bytes: 65_536,
      registration_limits: { perClient: 1, total: 2 },
    });
    await lifecycle.start();
    // All in one turn, before the first one is handled.
    bus.deliver(filters.register, registration('a1', 'client-a'));
    bus.deliver(filters.register, registration('a2', 'client-a')); // over client-a's own limit
    bus.deliver(filters.register, registration('b1', 'client-b'));
    bus.deliver(filters.register, registration('c1', 'client-c')); // over the total limit
    await expect.poll(() => registry.get('b1')?.descriptor.id).toBe('b1');
    expect(registry.get('a1')?.descriptor.id).toBe('a1');
    expect(registry.get('a2')).toBeUndefined();
    expect(registry.get('c1')).toBeUndefined();
    const invalid = bus.published.filter((p) => p.topic === topics.registeredInvalid());
    expect(invalid).toHaveLength(1);
    expect(JSON.parse(invalid[0]!.payload)).toMatchObject({
      plugin_id: null,
      ok: false,
      client_id: 'client-a',
      errors: [{ message: expect.stringContaining('1 registrations from this client are already waiting') }],
    });
    expect(invalid[0]!.options?.onlyTo).toEqual({ clientId: 'client-a' });
    expect(bus.published.some((p) => p.topic === topics.registered('c1'))).toBe(false);
    expect(lifecycle.counters.not_queued).toBe(2);
    await lifecycle.stop();
  });
});
