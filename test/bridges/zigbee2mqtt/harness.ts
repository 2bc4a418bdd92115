// Shared by the Zigbee2MQTT end-to-end tests: a log that tests can read, waiting for a condition, and
// calls through the Core's dispatcher (the path HTTP, MCP and conversations take).
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../../src/log.js';
import type { JsonObject, PluginResult } from '../../../src/protocol/types.js';
import type { TestCore } from '../../helpers/core.js';
import { bridgeDevices, HOME, type FixtureDevice } from '../../fixtures/zigbee2mqtt/devices.js';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export function memoryLogger(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function call(core: TestCore, plugin_id: string, capability_id: string, parameters: JsonObject = {}): Promise<PluginResult> {
  return core.ctx.dispatcher.invoke({ plugin_id, capability_id, parameters });
}

export function zigbeePluginIds(core: TestCore): string[] {
  return core.ctx.registry
    .list()
    .filter((r) => r.owner === 'zigbee2mqtt')
    .map((r) => r.descriptor.id)
    .sort();
}

export const stateOf = (core: TestCore, id: string): string | undefined => core.ctx.registry.get(id)?.state;

/** The home's device list, and what each device reports at first. */
export async function homeDevices(): Promise<{ devices: Awaited<ReturnType<typeof bridgeDevices>>; states: Record<string, JsonObject> }> {
  const devices = await bridgeDevices(Object.values(HOME) as FixtureDevice[]);
  const states: Record<string, JsonObject> = {
    [HOME.bulb.friendly_name]: { state: 'ON', brightness: 120, color_temp: 370, linkquality: 140 },
    [HOME.plug.friendly_name]: { state: 'OFF', power_on_behavior: 'previous', linkquality: 120 },
    [HOME.radiator.friendly_name]: { local_temperature: 19.5, occupied_heating_setpoint: 20, system_mode: 'heat' },
    [HOME.blind.friendly_name]: { state: 'CLOSE', position: 0, battery: 80 },
    [HOME.switch.friendly_name]: { state_left: 'ON', state_right: 'OFF' },
    [HOME.mute.friendly_name]: { state: 'OFF' },
  };
  return { devices, states };
}
