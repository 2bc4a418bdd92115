// The Core's readiness checks: broker, registry and retrieval always; the LLM and Home Assistant when
// configured. Rooms wired later add theirs through CoreContext.readiness.
import type Database from 'better-sqlite3';
import type { EmbeddedBrokerHandle } from '../bus/broker.js';
import type { CoreBus } from '../bus/core-bus.js';
import type { CoreConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { RetrievalStatus } from '../retrieval/search-api.js';
import { brokerProbe, registryProbe, retrievalProbe } from './core-probes.js';
import { homeAssistantTarget, probeHomeAssistant, probeLlm } from './endpoint-probes.js';
import { Readiness } from './readiness.js';

export interface CoreReadinessParts {
  config: CoreConfig;
  log: Logger;
  bus: CoreBus;
  broker?: EmbeddedBrokerHandle;
  db: Database.Database;
  retrieval: { status(): RetrievalStatus };
  registeredPlugins: () => number;
}

export function createCoreReadiness(parts: CoreReadinessParts): Readiness {
  const readiness = new Readiness({ log: parts.log });
  readiness.add('broker', brokerProbe(parts.bus, parts.broker));
  readiness.add('registry', registryProbe(parts.db));
  readiness.add('retrieval', retrievalProbe(parts.retrieval, parts.registeredPlugins));
  const llm = parts.config.llm;
  if (llm.base_url) readiness.add('llm', (signal) => probeLlm(llm, signal));
  const homeAssistant = homeAssistantTarget(parts.config);
  if (homeAssistant) readiness.add('homeassistant', (signal) => probeHomeAssistant(homeAssistant, signal));
  return readiness;
}
