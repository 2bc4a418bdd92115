// The start-up shape of the Core's parts: started in order, stopped in reverse; a part that fails to
// start is not stopped; one that fails to stop is logged and the others still stop.
import { describe, expect, it } from 'vitest';
import { PartRunner, runningPart, type Part } from '../../src/lifecycle/part.js';
import { silentLogger } from '../../src/log.js';

function recorder(): { events: string[]; part: (name: string, options?: { failStart?: boolean; failStop?: boolean }) => Part } {
  const events: string[] = [];
  return {
    events,
    part: (name, options = {}) => ({
      name,
      start: async () => {
        events.push(`start ${name}`);
        if (options.failStart) throw new Error(`${name} cannot start`);
      },
      stop: () => {
        events.push(`stop ${name}`);
        if (options.failStop) throw new Error(`${name} cannot stop`);
      },
    }),
  };
}

describe('PartRunner', () => {
  it('starts parts in order and stops them in reverse, once', async () => {
    const { events, part } = recorder();
    const parts = new PartRunner(silentLogger());
    for (const name of ['database', 'bus', 'http']) await parts.start(part(name));
    await parts.stopAll();
    await parts.stopAll();
    expect(events).toEqual(['start database', 'start bus', 'start http', 'stop http', 'stop bus', 'stop database']);
  });

  it('does not stop a part whose start failed, and stops the ones before it', async () => {
    const { events, part } = recorder();
    const parts = new PartRunner(silentLogger());
    await parts.start(part('database'));
    await expect(parts.start(part('bus', { failStart: true }))).rejects.toThrow('bus cannot start');
    await parts.stopAll();
    expect(events).toEqual(['start database', 'start bus', 'stop database']);
  });

  it('logs a part that fails to stop, with its name, and stops the others', async () => {
    const { events, part } = recorder();
    const errors: { component?: string; msg: string }[] = [];
    const log = silentLogger();
    log.error = ((obj: { component?: string }, msg: string) => void errors.push({ component: obj.component, msg })) as typeof log.error;
    const parts = new PartRunner(log);
    await parts.start(part('database'));
    await parts.start(part('bus', { failStop: true }));
    await parts.start(runningPart('metrics', () => void events.push('stop metrics')));
    await parts.stopAll();
    expect(events).toEqual(['start database', 'start bus', 'stop metrics', 'stop bus', 'stop database']);
    expect(errors).toEqual([{ component: 'bus', msg: 'component failed to stop' }]);
  });
});
