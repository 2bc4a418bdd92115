import { describe, expect, it } from 'vitest';
import { DeviceStates } from '../../../src/bridges/zigbee2mqtt/device-states.js';

describe('DeviceStates', () => {
  it('merges partial state messages into the last known state', () => {
    let now = 1000;
    const states = new DeviceStates(() => now);
    states.update('lamp', { state: 'ON', brightness: 10 });
    now = 2000;
    states.update('lamp', { brightness: 20 });
    expect(states.get('lamp')).toEqual({ state: { state: 'ON', brightness: 20 }, received_at: 2000 });
  });

  it('hands the next matching message to a waiter and skips the others', async () => {
    const states = new DeviceStates();
    const waiting = states.waitForNext('lamp', (m) => 'brightness' in m, 1000);
    states.update('lamp', { state: 'ON' });
    states.update('lamp', { brightness: 5 });
    await expect(waiting).resolves.toEqual({ brightness: 5 });
  });

  it('gives null on timeout and on abort', async () => {
    const states = new DeviceStates();
    await expect(states.waitForNext('lamp', () => true, 20)).resolves.toBeNull();
    const controller = new AbortController();
    const waiting = states.waitForNext('lamp', () => true, 10_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeNull();
  });

  it('moves state and waiters with a rename, and ends waits for a device that left', async () => {
    const states = new DeviceStates();
    states.update('old', { state: 'OFF' });
    const waiting = states.waitForNext('old', () => true, 1000);
    states.rename('old', 'new');
    expect(states.get('old')).toBeUndefined();
    states.update('new', { state: 'ON' });
    await expect(waiting).resolves.toEqual({ state: 'ON' });
    const gone = states.waitForNext('new', () => true, 10_000);
    states.forget('new');
    await expect(gone).resolves.toBeNull();
    expect(states.get('new')).toBeUndefined();
  });
});
