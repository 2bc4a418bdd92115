// The Core's adapters, each built the same way from one context: one adapter per plugin type (mqtt,
// inline built-ins, http, subprocess, mcp, python, Home Assistant when configured). The Core puts them
// all in its one adapter map; the built-in loader and the Python bridge that feed two of them come along.
import type { SelfTargetGuard } from './self-target.js';
import type { CoreBus } from '../bus/core-bus.js';
import { createPythonBridge, type PythonBridge } from '../bridges/python/bridge.js';
import { createHomeAssistantAdapter } from '../bridges/homeassistant/bridge.js';
import type { Notifier } from '../channels/notifier.js';
import type { CoreConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { PluginDescriptor, ValidationIssue } from '../protocol/types.js';
import type { Registry } from '../registry/registry.js';
import type { PluginAdapter } from './adapter.js';
import { createBuiltinLoader, type BuiltinLoader } from './builtin-loader.js';
import { createHttpAdapter } from './http.js';
import { McpAdapter } from './mcp.js';
import { MqttAdapter } from './mqtt.js';
import { createSubprocessAdapter } from './subprocess.js';

export interface CoreAdaptersContext {
  config: CoreConfig;
  registry: Registry;
  bus: CoreBus;
  log: Logger;
  /** Refuses plugins that point at the Core's own HTTP API. */
  selfTarget: SelfTargetGuard;
  /** Delivers built-ins' messages for users. */
  notifier: Notifier;
}

export interface CoreAdapters {
  /** Listens for MQTT plugins' results; start() subscribes. */
  mqtt: MqttAdapter;
  /** Loads built-in plugin folders into the inline adapter. */
  loader: BuiltinLoader;
  python: PythonBridge;
  /** Every adapter, one per plugin type. */
  all: PluginAdapter[];
}

export function buildCoreAdapters(ctx: CoreAdaptersContext): CoreAdapters {
  const { config, registry, bus, log, selfTarget } = ctx;
  const logFor = (type: string): Logger => log.child({ room: 'adapters', type });
  const mqtt = new MqttAdapter({ bus, log: logFor('mqtt'), max_payload_bytes: config.broker.max_payload_bytes });
  const python = createPythonBridge({
    registry,
    log: log.child({ room: 'bridges', type: 'python' }),
    roots: [config.plugins.dir, ...config.plugins.extra_dirs],
    hot_reload: config.plugins.hot_reload,
  });
  const loader = createBuiltinLoader({
    dir: config.plugins.dir,
    extra_dirs: config.plugins.extra_dirs,
    data_dir: config.data_dir,
    registry,
    log: logFor('inline'),
    hot_reload: config.plugins.hot_reload,
    python: python.folders,
    keep_record: python.ownsRecord,
    notify: (pluginId, notification) => ctx.notifier.notify({ ...notification, plugin_id: pluginId, budgeted: true }),
    check_targets: (descriptor) => checkTargets(selfTarget, descriptor),
  });
  const http = createHttpAdapter({ registry, log: logFor('http'), liveness: config.liveness, guard: selfTarget });
  const subprocess = createSubprocessAdapter({ log: logFor('subprocess') });
  const mcp = new McpAdapter({ registry, log: logFor('mcp'), guard: selfTarget });
  const homeAssistant = createHomeAssistantAdapter({ config: config.homeassistant, registry, log });
  const all = [mqtt, loader.adapter, http, subprocess, mcp, python.adapter, homeAssistant].filter((a): a is NonNullable<typeof a> => a !== undefined);
  return { mqtt, loader, python, all };
}

/** Problems with where a plugin points (the Core's own HTTP API); none means fine. */
export function checkTargets(selfTarget: SelfTargetGuard, descriptor: PluginDescriptor): Promise<ValidationIssue[]> {
  return selfTarget.descriptorProblems(descriptor);
}
