import type { PluginSource, PluginType } from '../types.js';

export type Dialect = 'homeclaw' | 'forgesyte' | 'ragflow';

export interface NormalizeOptions {
  /** Set by the Core, never trusted from the input. */
  source: PluginSource;
  /** Used when the input names no type (built-in folders: 'inline'; MQTT registrations: 'mqtt'). */
  default_type: PluginType;
}
