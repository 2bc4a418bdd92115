// With the embedded broker the Core sees every connection close. An MQTT plugin is reachable only while
// some client is subscribed to its invoke topic; when the last such connection closes (a process
// killed hard, a socket destroyed, a plugin that set no will) the plugin is marked offline at once,
// which fails its in-flight calls instead of leaving their callers waiting for the deadline. A plugin
// that another connection still serves (a newer session of the same plugin) is left alone. Only
// filters under the invoke subtree count as serving a plugin: a monitor subscribed to `homeclaw/#`
// receives the requests but answers none.
import type { CoreBus } from '../bus/core-bus.js';
import type { Logger } from '../log.js';
import { isPluginId } from '../protocol/ids.js';
import { parseTopic, topicMatches, topics } from '../protocol/topics.js';
import type { RegistryApi } from '../registry/registry-api.js';

const INVOKE_PREFIX = topics.invoke('');

/** A filter within the invoke subtree: the subscription of a plugin (or a host of plugins), not a monitor. */
function servesInvokes(filter: string): boolean {
  return filter.startsWith(INVOKE_PREFIX);
}

export interface MqttPathWatchDeps {
  bus: CoreBus;
  registry: RegistryApi;
  log: Logger;
}

export class MqttPathWatch {
  private off: (() => void) | undefined;

  constructor(private readonly deps: MqttPathWatchDeps) {}

  start(): void {
    // Without hasSubscribers the bus cannot tell whether another connection still serves a plugin.
    if (this.off || !this.deps.bus.hasSubscribers) return;
    this.off = this.deps.bus.onClientDisconnect((clientId, subscriptions) => this.onDisconnect(clientId, subscriptions));
  }

  stop(): void {
    this.off?.();
    this.off = undefined;
  }

  private onDisconnect(clientId: string, subscriptions: readonly string[]): void {
    for (const pluginId of this.servedPlugins(subscriptions)) {
      const record = this.deps.registry.get(pluginId);
      if (record?.descriptor.type !== 'mqtt' || (record.state !== 'online' && record.state !== 'stale')) continue;
      if (this.deps.bus.hasSubscribers?.(topics.invoke(pluginId), servesInvokes) !== false) continue;
      this.deps.log.warn({ plugin_id: pluginId, client: clientId }, 'the connection serving the plugin closed; marking it offline');
      this.deps.registry.setState(pluginId, 'offline', `its MQTT connection (client ${clientId}) closed`);
    }
  }

  /** Plugin ids whose invoke topic one of these filters receives. */
  private servedPlugins(subscriptions: readonly string[]): Set<string> {
    const ids = new Set<string>();
    for (const filter of subscriptions) {
      if (!servesInvokes(filter)) continue;
      const parsed = parseTopic(filter);
      if (parsed?.kind === 'invoke' && isPluginId(parsed.param)) {
        ids.add(parsed.param);
      } else if (filter.includes('+') || filter.includes('#')) {
        // A wildcard within the invoke subtree (a host of several plugins): every MQTT plugin it covers.
        for (const record of this.deps.registry.list()) {
          if (record.descriptor.type === 'mqtt' && topicMatches(filter, topics.invoke(record.descriptor.id))) ids.add(record.descriptor.id);
        }
      }
    }
    return ids;
  }
}
