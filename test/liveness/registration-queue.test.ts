import { describe, expect, it } from 'vitest';
import { RegistrationQueue, type WaitingRegistration } from '../../src/liveness/registration-queue.js';

interface Item extends WaitingRegistration {
  tag: string;
}
const item = (client: string | undefined, pluginId: string | undefined, tag: string, bytes = 10): Item => ({ client, pluginId, bytes, tag });

describe('RegistrationQueue', () => {
  it('a newer registration of an id from the same client replaces the waiting one in its place', () => {
    const queue = new RegistrationQueue<Item>();
    expect(queue.push(item('a', 'lamp', 'old'))).toEqual({ queued: true, replaced: false });
    queue.push(item('b', 'fan', 'fan'));
    expect(queue.push(item('a', 'lamp', 'new'))).toEqual({ queued: true, replaced: true });
    expect(queue.size).toBe(2);
    expect(queue.shift()?.tag).toBe('new');
    expect(queue.shift()?.tag).toBe('fan');
    expect(queue.shift()).toBeUndefined();
    // Once handled, the same id queues again.
    expect(queue.push(item('a', 'lamp', 'again'))).toEqual({ queued: true, replaced: false });
  });

  it('the same id from another client is not replaced (it is checked against its owner later)', () => {
    const queue = new RegistrationQueue<Item>();
    queue.push(item('a', 'lamp', 'a'));
    expect(queue.push(item('b', 'lamp', 'b'))).toEqual({ queued: true, replaced: false });
    expect(queue.size).toBe(2);
  });

  it('refuses past the per-client limit with the reason, and takes more once some are handled', () => {
    const queue = new RegistrationQueue<Item>({ perClient: 2 });
    queue.push(item('a', 'p1', '1'));
    queue.push(item('a', 'p2', '2'));
    const refused = queue.push(item('a', 'p3', '3'));
    expect(refused).toEqual({ queued: false, limit: 'client', reason: expect.stringContaining('2 registrations from this client are already waiting') });
    expect(queue.push(item('b', 'p3', 'b3')).queued).toBe(true);
    queue.shift();
    expect(queue.push(item('a', 'p3', '3')).queued).toBe(true);
  });

  it('refuses past the total count and byte limits; an unknown client (external broker) counts only there', () => {
    const byCount = new RegistrationQueue<Item>({ total: 2 });
    byCount.push(item(undefined, 'p1', '1'));
    byCount.push(item(undefined, 'p2', '2'));
    expect(byCount.push(item(undefined, 'p3', '3'))).toEqual({ queued: false, limit: 'total', reason: expect.stringContaining('2 registrations waiting') });
    const byBytes = new RegistrationQueue<Item>({ bytes: 100 });
    byBytes.push(item('a', 'p1', '1', 60));
    expect(byBytes.push(item('b', 'p2', '2', 50)).queued).toBe(false);
    byBytes.shift();
    expect(byBytes.push(item('b', 'p2', '2', 50)).queued).toBe(true);
  });

  it('registrations without a readable id are never merged', () => {
    const queue = new RegistrationQueue<Item>();
    queue.push(item('a', undefined, 'x'));
    queue.push(item('a', undefined, 'y'));
    expect(queue.size).toBe(2);
  });
});
