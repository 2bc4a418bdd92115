// The Core's configuration after defaults, file and environment are merged and validated. Every type is
// derived from the schema in ./schema.ts, which documents each key.
import type { Static } from '@sinclair/typebox';
import type {
  AccessSchema,
  BrokerLoginSchema,
  BrokerSchema,
  CONFIG_SCHEMA,
  ConversationSchema,
  DashboardSchema,
  DispatchSchema,
  EventsSchema,
  HomeAssistantSchema,
  HttpSchema,
  LimitsSchema,
  LivenessSchema,
  LlmSchema,
  MetricsSchema,
  NotificationsSchema,
  OAuthSchema,
  OpenAiEndpointSchema,
  PluginsSchema,
  PolicyRuleSchema,
  PolicySchema,
  RetrievalSchema,
  SchedulerSchema,
  WyomingSchema,
  Zigbee2mqttSchema,
} from './schema.js';

export type BrokerConfig = Static<typeof BrokerSchema>;
export type BrokerLoginConfig = Static<typeof BrokerLoginSchema>;
export type HttpConfig = Static<typeof HttpSchema>;
export type OpenAiEndpointConfig = Static<typeof OpenAiEndpointSchema>;
export type OAuthConfig = Static<typeof OAuthSchema>;
export type DashboardConfig = Static<typeof DashboardSchema>;
export type DispatchConfig = Static<typeof DispatchSchema>;
export type LivenessConfig = Static<typeof LivenessSchema>;
export type PluginsConfig = Static<typeof PluginsSchema>;
export type RetrievalConfig = Static<typeof RetrievalSchema>;
export type LlmConfig = Static<typeof LlmSchema>;
export type ConversationConfig = Static<typeof ConversationSchema>;
export type WyomingConfig = Static<typeof WyomingSchema>;
export type Zigbee2mqttConfig = Static<typeof Zigbee2mqttSchema>;
export type NotificationsConfig = Static<typeof NotificationsSchema>;
export type SchedulerConfig = Static<typeof SchedulerSchema>;
export type HomeAssistantConfig = Static<typeof HomeAssistantSchema>;
export type PolicyRule = Static<typeof PolicyRuleSchema>;
export type PolicyConfig = Static<typeof PolicySchema>;
export type AccessConfig = Static<typeof AccessSchema>;
export type LimitsConfig = Static<typeof LimitsSchema>;
export type EventsConfig = Static<typeof EventsSchema>;
export type MetricsConfig = Static<typeof MetricsSchema>;
export type CoreConfig = Static<typeof CONFIG_SCHEMA>;
