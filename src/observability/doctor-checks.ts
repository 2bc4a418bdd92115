// The single checks of `homeclaw doctor`: can `homeclaw start` run here, and can it reach what it is
// configured to use? Each answers pass, fail (with the fix) or skip (not configured). None changes
// anything beyond a probe file it removes again.
import { accessSync, constants, existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import mqtt from 'mqtt';
import type { EndpointCheck } from './endpoint-probes.js';
import { errorMessage } from '../kit/error-message.js';
import { redactUrl } from '../kit/redact-url.js';

export type CheckStatus = 'pass' | 'fail' | 'skip';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

const pass = (name: string, detail: string): DoctorCheck => ({ name, status: 'pass', detail });
const fail = (name: string, detail: string, fix: string): DoctorCheck => ({ name, status: 'fail', detail, fix });
export const skip = (name: string, detail: string): DoctorCheck => ({ name, status: 'skip', detail });

function errorText(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e?.code ? `${e.code}: ${e.message}` : errorMessage(error);
}

// ---- Node --------------------------------------------------------------------------------------------

/** The lowest major version in an engines range such as ">=20" or "^20.11 || >=22". */
export function minimumNodeMajor(enginesRange: string): number {
  const majors = [...enginesRange.matchAll(/(\d+)(?:\.\d+)*/g)].map((m) => Number(m[1]));
  return majors.length > 0 ? Math.min(...majors) : 0;
}

export function checkNodeVersion(version: string, enginesRange: string): DoctorCheck {
  const major = Number(/^v?(\d+)/.exec(version)?.[1] ?? NaN);
  const needed = minimumNodeMajor(enginesRange);
  if (Number.isFinite(major) && major >= needed) return pass('node', `Node.js ${version} (needs ${enginesRange})`);
  return fail(
    'node',
    `Node.js ${version} is too old (needs ${enginesRange})`,
    `install Node.js ${needed} or newer (nodejs.org, or your distribution's nodejs package), then run npm ci again`,
  );
}

// ---- ports -------------------------------------------------------------------------------------------

export interface PortCheckTarget {
  /** e.g. "http port" */
  name: string;
  host: string;
  port: number;
  /** How the user changes it, e.g. "HOMECLAW_HTTP_PORT / http.port". */
  setting: string;
}

function tryListen(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

/**
 * Whether a HomeClaw Core answers /healthz there: "in use" then has a likely culprit. A plain one-shot
 * request on its own socket, destroyed at the end, so a program that never answers HTTP holds nothing.
 */
function homeclawAnswers(host: string, port: number): Promise<boolean> {
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return new Promise((resolve) => {
    const request = httpGet({ host: target, port, path: '/healthz', agent: false, timeout: 1500 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk.slice(0, 200)));
      response.on('end', () => {
        request.destroy();
        try {
          resolve(response.statusCode === 200 && (JSON.parse(body) as { status?: unknown }).status === 'ok');
        } catch {
          resolve(false);
        }
      });
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
    request.on('close', () => resolve(false));
  });
}

export async function checkPortFree(target: PortCheckTarget): Promise<DoctorCheck> {
  const where = `${target.host}:${target.port}`;
  if (target.port === 0) return skip(target.name, `${target.host}: port 0 (a free port is picked at start)`);
  const error = await tryListen(target.host, target.port);
  if (!error) return pass(target.name, `${where} is free`);
  if (error.code === 'EADDRINUSE') {
    const core = await homeclawAnswers(target.host, target.port);
    return fail(
      target.name,
      `${where} is in use${core ? ' by a running HomeClaw Core' : ''}`,
      core
        ? `stop that Core first (doctor checks that homeclaw start can run), or give this one another port: ${target.setting}`
        : `stop the program using it (ss -ltnp 'sport = :${target.port}' names it), or choose another port: ${target.setting}`,
    );
  }
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
    return fail(target.name, `${target.host} is not an address of this machine (${error.code})`, `use 127.0.0.1, 0.0.0.0 or one of this machine's addresses`);
  }
  if (error.code === 'EACCES') {
    return fail(target.name, `not allowed to listen on ${where} (EACCES)`, `ports below 1024 need privileges: choose a port above 1023 (${target.setting})`);
  }
  return fail(target.name, `cannot listen on ${where}: ${errorText(error)}`, `choose another host or port (${target.setting})`);
}

// ---- data directory ----------------------------------------------------------------------------------

const DATA_DIR_FIX = 'make it writable by this user (chown or chmod), or set HOMECLAW_DATA_DIR / data_dir to a writable folder';

/** The data directory can hold the database: an existing one takes a file, a missing one can be created. */
export function checkDataDir(dir: string): DoctorCheck {
  try {
    if (existsSync(dir)) {
      if (!statSync(dir).isDirectory()) return fail('data dir', `${dir} exists but is not a directory`, DATA_DIR_FIX);
      const probe = join(dir, `.homeclaw-doctor-${process.pid}`);
      writeFileSync(probe, 'probe');
      rmSync(probe, { force: true });
      return pass('data dir', `${dir} is writable`);
    }
    // Missing: `homeclaw start` creates it, which needs the nearest existing parent to be a writable folder.
    let parent = dirname(dir);
    while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
    if (!statSync(parent).isDirectory()) return fail('data dir', `${dir} cannot be created: ${parent} is not a directory`, DATA_DIR_FIX);
    accessSync(parent, constants.W_OK | constants.X_OK);
    return pass('data dir', `${dir} does not exist yet; it will be created in ${parent}`);
  } catch (error) {
    return fail('data dir', `${dir} is not writable (${errorText(error)})`, DATA_DIR_FIX);
  }
}

// ---- external broker ---------------------------------------------------------------------------------

export interface BrokerTarget {
  url: string;
  username: string | null;
  password: string | null;
}

/** Connects the way the Core would (a clean session, no retries) and disconnects at once. */
export async function checkExternalBroker(target: BrokerTarget, timeoutMs: number): Promise<DoctorCheck> {
  const shown = redactUrl(target.url);
  try {
    const client = await mqtt.connectAsync(target.url, {
      clientId: `homeclaw-doctor-${process.pid}`,
      connectTimeout: timeoutMs,
      reconnectPeriod: 0,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
    });
    await client.endAsync();
    return pass('broker', `connected to ${shown}${target.username ? ` as ${target.username}` : ''}`);
  } catch (error) {
    const text = errorText(error);
    if (/not authori[sz]ed|bad user ?name or password|connack.*(4|5)\b/i.test(text)) {
      return fail(
        'broker',
        `${shown} refused the login: ${text}`,
        'set HOMECLAW_BROKER_USERNAME and HOMECLAW_BROKER_PASSWORD (broker.username / broker.password) to a login the broker accepts',
      );
    }
    return fail(
      'broker',
      `cannot connect to ${shown}: ${text}`,
      'start the broker, or correct HOMECLAW_BROKER_URL / broker.url (unset it to use the embedded broker)',
    );
  }
}

// ---- retrieval ---------------------------------------------------------------------------------------

/** The native binding the chromadb CLI loads for this platform (see the chromadb package's bindings.ts). */
export function chromaBindingPackage(os: string = platform(), cpu: string = arch()): string | null {
  const table: Record<string, string> = {
    'darwin-arm64': 'chromadb-js-bindings-darwin-arm64',
    'darwin-x64': 'chromadb-js-bindings-darwin-x64',
    'linux-arm64': 'chromadb-js-bindings-linux-arm64-gnu',
    'linux-x64': 'chromadb-js-bindings-linux-x64-gnu',
    'win32-arm64': 'chromadb-js-bindings-win32-arm64-msvc',
  };
  return table[`${os}-${cpu}`] ?? null;
}

/** Loads the binding as the chromadb package would (resolved from chromadb's own folder). */
export function loadChromaBinding(packageName: string): unknown {
  const fromChromadb = createRequire(createRequire(import.meta.url).resolve('chromadb'));
  return fromChromadb(packageName);
}

const BM25_FALLBACK = 'or run without dense retrieval (HOMECLAW_RETRIEVAL_ENABLED=false: BM25 only), or point HOMECLAW_CHROMA_URL at a running Chroma server';

export function checkChromaBinding(packageName: string | null, load: (name: string) => unknown = loadChromaBinding): DoctorCheck {
  if (!packageName)
    return fail('chroma', `chromadb has no native binding for ${platform()}-${arch()}`, `run Chroma elsewhere and set HOMECLAW_CHROMA_URL, ${BM25_FALLBACK}`);
  try {
    load(packageName);
    return pass('chroma', `${packageName} loads`);
  } catch (error) {
    const text = errorText(error);
    if (/GLIBC_\d/.test(text)) {
      return fail(
        'chroma',
        `${packageName} needs a newer C library: ${text.split('\n')[0]}`,
        `reinstall with npm ci (package.json pins the build that loads on glibc 2.36), ${BM25_FALLBACK}`,
      );
    }
    if (/cannot find module|MODULE_NOT_FOUND/i.test(text)) {
      return fail('chroma', `${packageName} is not installed`, `run npm ci (it installs the binding for this platform), ${BM25_FALLBACK}`);
    }
    return fail('chroma', `${packageName} does not load: ${text.split('\n')[0]}`, `reinstall with npm ci, ${BM25_FALLBACK}`);
  }
}

export async function checkChromaServer(url: string, heartbeat: (url: string) => Promise<boolean>): Promise<DoctorCheck> {
  if (await heartbeat(url)) return pass('chroma', `Chroma answers at ${url}`);
  return fail(
    'chroma',
    `no Chroma heartbeat at ${url}/api/v2/heartbeat`,
    `start that Chroma server or unset HOMECLAW_CHROMA_URL (retrieval.chroma.url) to run an embedded one, ${BM25_FALLBACK}`,
  );
}

export async function checkEncoder(name: string, embed: () => Promise<number[][]>, fix: string): Promise<DoctorCheck> {
  const started = Date.now();
  try {
    const vectors = await embed();
    const dimension = vectors[0]?.length ?? 0;
    if (dimension === 0) return fail('encoder', `${name} returned no vector`, fix);
    return pass('encoder', `${name}: ${dimension}-d, first vector in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    return fail('encoder', `${name} does not work: ${errorText(error).split('\n')[0]}`, fix);
  }
}

// ---- LLM and Home Assistant ----------------------------------------------------------------------------

export function llmCheck(result: EndpointCheck): DoctorCheck {
  if (result.up) return pass('llm', result.reason);
  const fixes: Record<NonNullable<EndpointCheck['problem']>, string> = {
    unreachable: 'start the model server, or correct HOMECLAW_LLM_BASE_URL (llm.base_url), e.g. http://127.0.0.1:11434/v1 for Ollama',
    timeout: 'the server did not answer in time: check that it is running and not overloaded, and the address in HOMECLAW_LLM_BASE_URL',
    unauthorized: 'set HOMECLAW_LLM_API_KEY (llm.api_key) to a key this server accepts',
    not_found: 'HOMECLAW_LLM_BASE_URL must be the API root of an OpenAI-compatible server, usually ending in /v1',
    http_error: "the server answered with an error: see the model server's log",
    bad_url: 'set HOMECLAW_LLM_BASE_URL to an http(s) URL, e.g. http://127.0.0.1:11434/v1',
  };
  return fail('llm', result.reason, fixes[result.problem ?? 'http_error']);
}

export function homeAssistantCheck(hasToken: boolean, result: EndpointCheck): DoctorCheck {
  if (result.up) return pass('homeassistant', result.reason);
  const tokenFix = 'create a long-lived access token in Home Assistant (your profile, Security tab) and set HOMECLAW_HA_TOKEN (homeassistant.token)';
  const fixes: Record<NonNullable<EndpointCheck['problem']>, string> = {
    unreachable: 'check HOMECLAW_HA_URL (homeassistant.url), e.g. http://homeassistant.local:8123, and that Home Assistant is running',
    timeout: 'Home Assistant did not answer in time: check HOMECLAW_HA_URL and that it is running',
    unauthorized: hasToken ? `Home Assistant refused the token: ${tokenFix}` : tokenFix,
    not_found: "HOMECLAW_HA_URL must be Home Assistant's base URL (http://host:8123), without /api",
    http_error: 'Home Assistant answered with an error: see its log',
    bad_url: 'set HOMECLAW_HA_URL to an http(s) URL, e.g. http://homeassistant.local:8123',
  };
  return fail('homeassistant', result.reason, fixes[result.problem ?? 'http_error']);
}
