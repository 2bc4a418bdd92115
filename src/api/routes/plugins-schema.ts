// The inputs of the plugin routes that are not a descriptor: they validate the requests and are what
// the OpenAPI document shows. A registration's descriptor is checked by the protocol's own validator.
import { type Static, Type } from '@sinclair/typebox';
import { CAPABILITY_ID_PATTERN } from '../../protocol/descriptor/name-patterns.js';
import { PLUGIN_ID_PATTERN } from '../../protocol/ids.js';
import type { JsonObject } from '../../protocol/types.js';

const pluginId = (description: string) => Type.String({ pattern: PLUGIN_ID_PATTERN.source, description });

/**
 * What a registration over HTTP adds to the descriptor: the adapter type, and for an MQTT device the
 * heartbeat interval it will keep. The descriptor itself (any dialect) is checked by the protocol's validator.
 */
export const RegistrationEnvelope = Type.Object(
  {
    type: Type.Optional(Type.Unsafe<'http' | 'subprocess' | 'mcp' | 'mqtt'>({ type: 'string', enum: ['http', 'subprocess', 'mcp', 'mqtt'], default: 'http' })),
    heartbeat_interval_sec: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'mqtt only: how often the device heartbeats, in seconds.' })),
  },
  { additionalProperties: true },
);

/** A route about one plugin. */
export const PluginParams = Type.Object({ id: pluginId('The plugin id.') });
export type PluginParams = Static<typeof PluginParams>;

/** A route about one capability of a plugin. */
export const CapabilityParams = Type.Object({
  id: pluginId('The plugin id.'),
  tool: Type.String({ pattern: CAPABILITY_ID_PATTERN.source, description: 'The capability id.' }),
});
export type CapabilityParams = Static<typeof CapabilityParams>;

export const UnregisterRequest = Type.Object({ plugin_id: pluginId('The plugin to remove.') }, { additionalProperties: false });
export type UnregisterRequest = Static<typeof UnregisterRequest>;

export const TransferRequest = Type.Object({ credential: pluginId('The plugin credential that is to own the id.') }, { additionalProperties: false });
export type TransferRequest = Static<typeof TransferRequest>;

/** The parameters of a direct invoke; the capability's input schema checks them before the plugin is called. */
export const ToolParameters = Type.Unsafe<JsonObject>({
  type: 'object',
  description:
    'The capability\'s parameters (no body: none); validated against its input schema before the plugin is called. "confirmed": true confirms a capability that requires confirmation, unless the capability has a parameter of that name.',
});

export const RunQueryString = Type.Object({
  confirmed: Type.Optional(
    Type.Unsafe<'true' | '1' | 'false' | '0'>({
      type: 'string',
      enum: ['true', '1', 'false', '0'],
      description: 'Confirms a capability that requires confirmation (also "confirmed": true in the body).',
    }),
  ),
});
export type RunQueryString = Static<typeof RunQueryString>;
