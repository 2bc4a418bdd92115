// homeclaw-bus/sdk: what a plugin author imports to join a HomeClaw bus from Node.
export { connectPlugin } from './connect-plugin.js';
export { PluginRegistrationError } from './errors.js';
export { PluginNotifyError } from './notifications.js';
export { silentSdkLogger } from './default-logger.js';
export type {
  CapabilityHandler,
  CapabilityHandlers,
  CapabilityInput,
  CloseOptions,
  ConnectedPlugin,
  ConnectPluginOptions,
  HandlerContext,
  HandlerOutput,
  ParameterInput,
  PluginDescriptorInput,
  PluginEvents,
  PluginStats,
  SdkLogger,
} from './types.js';
export type { JsonObject, JsonValue, PluginRequest, PluginResult, ValidationIssue } from '../protocol/types.js';
