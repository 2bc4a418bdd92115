// The doors people and callers reach the Core through, started as parts in this order: the MQTT
// channels, the MQTT call front door, Home Assistant discovery (when on) and the Wyoming server (when a
// port is set). Part of the composition root: startCore builds what they use and hands it over here.
import { CallerBindings } from '../access/caller-bindings.js';
import { ChannelBindings } from '../access/channel-bindings.js';
import { attachCallFrontDoor } from '../bridges/homeassistant/call-front-door.js';
import { DiscoveryPublisher } from '../bridges/homeassistant/discovery/publisher.js';
import type { CreatedBus } from '../bus/create-bus.js';
import { startWyomingServer, type WyomingServer, wyomingSettingsProblems } from '../channels/wyoming-server.js';
import type { CoreConfig } from '../config/types.js';
import type { ConversationEngine } from '../conversation/engine-types.js';
import { attachMqttChannels } from '../conversation/mqtt-channel.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { CoreEvents } from '../dispatch/invocation-events.js';
import { packageVersion } from '../kit/package-version.js';
import type { Logger } from '../log.js';
import type { TypedEventBus } from '../registry/events.js';
import type { Registry } from '../registry/registry.js';
import type { Retrieval } from '../retrieval/retrieval.js';
import { ConfigError, EMBEDDED_DISCOVERY_WARNING } from './core-context.js';
import { type PartRunner, runningPart } from './part.js';

export interface FrontDoorDeps {
  config: CoreConfig;
  log: Logger;
  parts: PartRunner;
  created: Pick<CreatedBus, 'bus' | 'broker' | 'credentials'>;
  engine: ConversationEngine;
  dispatcher: Dispatcher;
  registry: Registry;
  retrieval: Retrieval;
  events: TypedEventBus<CoreEvents>;
}

/** Starts every front door the config asks for; the Wyoming server, when started, is returned for its port. */
export async function startFrontDoors(deps: FrontDoorDeps): Promise<{ wyoming: WyomingServer | undefined }> {
  const { config, log, parts, engine, dispatcher, registry, retrieval, events } = deps;
  const { bus, broker, credentials } = deps.created;
  const bindings = new ChannelBindings({
    embedded: bus.embedded,
    configured: config.access.channels,
    credentialUsers: (channel) => credentials.usersOfChannel(channel),
  });
  const channels = await attachMqttChannels({
    bus,
    engine,
    log: log.child({ room: 'conversation' }),
    max_payload_bytes: config.broker.max_payload_bytes,
    authorizeSpeaker: (input) => bindings.authorize(input),
  });
  await parts.start(runningPart('channels', () => channels.stop()));
  const callers = new CallerBindings({ embedded: bus.embedded, configured: config.access.callers.users });
  const frontDoor = await attachCallFrontDoor({
    bus,
    dispatcher,
    log,
    max_payload_bytes: config.broker.max_payload_bytes,
    authorizeCaller: (input) => callers.decide(input),
  });
  await parts.start(runningPart('call-front-door', () => frontDoor.stop()));
  if (config.homeassistant.discovery) {
    if (broker) log.warn(EMBEDDED_DISCOVERY_WARNING);
    const discovery = new DiscoveryPublisher({
      bus,
      registry,
      dispatcher,
      retrievalStatus: () => retrieval.status(),
      prefix: config.homeassistant.discovery_prefix,
      log,
    });
    let unfollow: (() => void) | undefined;
    await parts.start({
      name: 'homeassistant-discovery',
      start: async () => {
        await discovery.start();
        unfollow = events.on('invocation.finished', ({ record, refused }) => (refused ? undefined : discovery.invocationFinished(record)));
      },
      stop: async () => {
        unfollow?.();
        await discovery.stop();
      },
    });
  }

  let wyoming: WyomingServer | undefined;
  if (config.wyoming.port !== null) {
    const problems = wyomingSettingsProblems(config.wyoming);
    if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
    const running = await startWyomingServer({
      settings: { ...config.wyoming, port: config.wyoming.port },
      engine,
      log: log.child({ room: 'channels', channel: 'wyoming' }),
      version: packageVersion(),
    });
    wyoming = running;
    await parts.start(runningPart('wyoming', () => running.stop()));
  }
  return { wyoming };
}
