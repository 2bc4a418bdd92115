// `homeclaw start` warns when Home Assistant discovery is on while the Core embeds its MQTT 3.1.1
// broker (Home Assistant needs an MQTT 5 broker from 2027.1 and cannot see devices on a broker it does
// not use), and does not when the Core is a client of an external broker.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { startCoreProcess, type CoreProcess } from '../helpers/core-process.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';

const WARNING = 'warning: homeassistant.discovery is on but the Core runs its embedded MQTT 3.1.1 broker';

describe('homeclaw start with Home Assistant discovery', () => {
  let core: CoreProcess | undefined;
  let mosquitto: MosquittoHandle | undefined;
  const dirs: string[] = [];

  const dir = (): string => {
    const made = mkdtempSync(join(tmpdir(), 'homeclaw-start-warning-'));
    dirs.push(made);
    return made;
  };

  afterEach(async () => {
    await core?.stop();
    await mosquitto?.stop();
    core = undefined;
    mosquitto = undefined;
    for (const made of dirs.splice(0)) rmSync(made, { recursive: true, force: true });
  });

  it('warns with the embedded broker, saying what to set', async () => {
    await ensureBuilt();
    core = await startCoreProcess(await coreProcessEnv(dir(), dir(), { HOMECLAW_HA_DISCOVERY: 'true' }));
    expect(core.output()).toContain(WARNING);
    expect(core.output()).toContain('needs an MQTT 5 broker. Set HOMECLAW_BROKER_URL');
  });

  it('does not warn with an external broker (the Core speaks MQTT 5 to it)', async () => {
    await ensureBuilt();
    mosquitto = await startMosquitto();
    core = await startCoreProcess(await coreProcessEnv(dir(), dir(), { HOMECLAW_HA_DISCOVERY: 'true', HOMECLAW_BROKER_URL: mosquitto.url }));
    expect(core.output()).toContain(`HomeClaw Core running: MQTT ${mosquitto.url}`);
    expect(core.output()).not.toContain(WARNING);
    expect(mosquitto.output()).toMatch(/as homeclaw-core-[0-9a-f]+ \(p5,/);
  });

  it('does not warn with the embedded broker when discovery is off', async () => {
    await ensureBuilt();
    core = await startCoreProcess(await coreProcessEnv(dir(), dir()));
    expect(core.output()).not.toContain(WARNING);
  });
});
