// The environment of a `homeclaw start` child process for tests: free loopback ports, its own data
// directory, no retrieval server and no LLM unless a test asks, and the URLs the CLI commands then use.
import { freePort } from './ports.js';

export async function coreProcessEnv(dataDir: string, pluginsDir: string, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const [mqttPort, httpPort] = [await freePort(), await freePort()];
  return {
    HOMECLAW_DATA_DIR: dataDir,
    HOMECLAW_MQTT_PORT: String(mqttPort),
    HOMECLAW_HTTP_PORT: String(httpPort),
    HOMECLAW_WS_PORT: '0',
    HOMECLAW_RETRIEVAL_ENABLED: 'false',
    HOMECLAW_PLUGINS_DIR: pluginsDir,
    HOMECLAW_URL: `http://127.0.0.1:${httpPort}`,
    HOMECLAW_MQTT_URL: `mqtt://127.0.0.1:${mqttPort}`,
    HOMECLAW_LOG_LEVEL: 'warn',
    // Empty: the CLI must find the token the Core wrote into the data directory.
    HOMECLAW_ADMIN_TOKEN: '',
    HOMECLAW_LLM_BASE_URL: '',
    ...extra,
  };
}
