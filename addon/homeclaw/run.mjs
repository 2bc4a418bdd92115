#!/usr/bin/env node
// Home Assistant add-on entry point: reads the add-on's options and the MQTT service that the
// Supervisor hands to add-ons declaring `services: [mqtt:need]` (GET http://supervisor/services/mqtt
// with the SUPERVISOR_TOKEN, the API bashio's `bashio::services mqtt` reads), then runs the Core as a
// client of that broker (external broker mode), as the unprivileged image user.
//
// Environment (set by the Supervisor, or by tests): SUPERVISOR_TOKEN; HOMECLAW_SUPERVISOR_URL
// (default http://supervisor); HOMECLAW_ADDON_OPTIONS (default /data/options.json); HOMECLAW_CLI
// (default /app/dist/src/cli.js); HOMECLAW_ADDON_USER "uid:gid" to drop to when started as root;
// HOMECLAW_ADDON_WAIT_SEC how long to wait for the MQTT service (default 60); HOMECLAW_INGRESS_PROXY the
// address ingress requests come from (default the Supervisor's, 172.30.32.2).
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';

const env = process.env;
const supervisor = (env.HOMECLAW_SUPERVISOR_URL || 'http://supervisor').replace(/\/+$/, '');
const optionsFile = env.HOMECLAW_ADDON_OPTIONS || '/data/options.json';
const cli = env.HOMECLAW_CLI || '/app/dist/src/cli.js';
const waitSec = Number(env.HOMECLAW_ADDON_WAIT_SEC ?? 60);
/** The Supervisor's address on the add-on network, where ingress requests come from. */
const SUPERVISOR_ADDRESS = '172.30.32.2';

function say(message) {
  process.stderr.write(`[homeclaw add-on] ${message}\n`);
}

function die(message) {
  say(`error: ${message}`);
  process.exit(1);
}

/** @returns {Record<string, unknown>} */
function readOptions() {
  if (!existsSync(optionsFile)) {
    say(`${optionsFile} not found: using the defaults`);
    return {};
  }
  try {
    const value = JSON.parse(readFileSync(optionsFile, 'utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
  } catch (error) {
    return die(`${optionsFile} is not valid JSON: ${error.message}`);
  }
}

/** The Supervisor's answer envelope is {result: "ok" | "error", data | message}. */
async function mqttService(token) {
  const deadline = Date.now() + Math.max(0, waitSec) * 1000;
  for (;;) {
    let problem;
    try {
      const response = await fetch(`${supervisor}/services/mqtt`, { headers: { authorization: `Bearer ${token}` } });
      const body = await response.json().catch(() => ({}));
      if (response.ok && body.result === 'ok' && body.data && typeof body.data.host === 'string') return body.data;
      problem = `the Supervisor answered ${response.status}: ${body.message ?? JSON.stringify(body).slice(0, 200)}`;
    } catch (error) {
      problem = `cannot reach the Supervisor at ${supervisor}: ${error.cause?.code ?? error.message}`;
    }
    if (Date.now() >= deadline) {
      return die(`no MQTT service (${problem}). Install and start the Mosquitto broker add-on, then restart this add-on.`);
    }
    say(`waiting for the MQTT service (${problem})`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function str(value) {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The Core's environment: the image's own settings, the options, the broker and Home Assistant. */
function coreEnvironment(options, mqtt, token) {
  const out = { ...env };
  // The Core never inherits the Supervisor's variables beyond what it is given below.
  delete out.SUPERVISOR_TOKEN;
  delete out.HASSIO_TOKEN;
  const port = Number(mqtt.port ?? 1883);
  out.HOMECLAW_BROKER_URL = `${mqtt.ssl === true ? 'mqtts' : 'mqtt'}://${mqtt.host}:${Number.isInteger(port) ? port : 1883}`;
  if (str(mqtt.username)) out.HOMECLAW_BROKER_USERNAME = mqtt.username;
  if (str(mqtt.password)) out.HOMECLAW_BROKER_PASSWORD = mqtt.password;
  const set = (name, value) => {
    if (value !== undefined) out[name] = String(value);
  };
  set('HOMECLAW_LOG_LEVEL', str(options.log_level));
  set('HOMECLAW_LOG_FORMAT', str(options.log_format));
  if (typeof options.retrieval_enabled === 'boolean') set('HOMECLAW_RETRIEVAL_ENABLED', options.retrieval_enabled);
  set('HOMECLAW_LLM_BASE_URL', str(options.llm_base_url));
  set('HOMECLAW_LLM_MODEL', str(options.llm_model));
  set('HOMECLAW_LLM_API_KEY', str(options.llm_api_key));
  set('HOMECLAW_ADMIN_TOKEN', str(options.admin_token));
  // The sidebar panel (ingress): Home Assistant has signed the person in, and the Supervisor connects
  // from 172.30.32.2 with X-Ingress-Path; the Core lets exactly those requests act as the admin.
  set('HOMECLAW_INGRESS_PROXY', env.HOMECLAW_INGRESS_PROXY || SUPERVISOR_ADDRESS);
  // homeassistant_api: true lets the add-on reach Home Assistant's API through the Supervisor's proxy.
  set('HOMECLAW_HA_URL', env.HOMECLAW_HA_URL || `${supervisor}/core`);
  set('HOMECLAW_HA_TOKEN', env.HOMECLAW_HA_TOKEN || token);
  return out;
}

function chownTree(path, uid, gid) {
  chownSync(path, uid, gid);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) chownTree(child, uid, gid);
    else if (entry.isFile()) chownSync(child, uid, gid);
  }
}

/** As root with HOMECLAW_ADDON_USER set: hand the data folder to that user and run the Core as it. */
function identity(coreEnv) {
  const wanted = /^(\d+):(\d+)$/.exec(env.HOMECLAW_ADDON_USER ?? '');
  if (!wanted || typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const [uid, gid] = [Number(wanted[1]), Number(wanted[2])];
  const dataDir = coreEnv.HOMECLAW_DATA_DIR || '/data';
  mkdirSync(dataDir, { recursive: true });
  chownTree(dataDir, uid, gid);
  return { uid, gid };
}

const token = env.SUPERVISOR_TOKEN;
if (!token) die('SUPERVISOR_TOKEN is not set: this script runs inside a Home Assistant add-on (use homeclaw start elsewhere)');
const options = readOptions();
const mqtt = await mqttService(token);
say(`MQTT service from the Supervisor: ${mqtt.host}:${mqtt.port}${mqtt.username ? ` as ${mqtt.username}` : ''}${mqtt.ssl ? ' (TLS)' : ''}`);
const coreEnv = coreEnvironment(options, mqtt, token);
const as = identity(coreEnv);
if (!existsSync(cli)) die(`the Core is not at ${cli}`);
// One V8 helper thread: the Core's garbage collections leave a core to the bus (see the README, Performance).
const core = spawn(process.execPath, ['--v8-pool-size=1', cli, 'start'], { env: coreEnv, stdio: 'inherit', ...as });
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => core.kill(signal));
core.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
