// Entry of `homeclaw mcp` when run directly: `node dist/src/api/mcp-stdio-main.js`.
// HOMECLAW_URL (default http://127.0.0.1:8765), token from HOMECLAW_ADMIN_TOKEN or
// <HOMECLAW_DATA_DIR or ./data>/admin.token. Logs go to stderr: stdout is the MCP channel.
import { createLogger } from '../log.js';
import { proxySettingsFromEnv, runMcpStdioProxy } from './mcp-stdio.js';

async function main(): Promise<void> {
  const log = createLogger({ level: process.env.HOMECLAW_LOG_LEVEL ?? 'warn' });
  const settings = proxySettingsFromEnv(process.env, process.cwd());
  if ('error' in settings) {
    process.stderr.write(`homeclaw mcp: ${settings.error}\n`);
    process.exit(1);
  }
  const proxy = await runMcpStdioProxy({ ...settings, log });
  await proxy.closed;
  process.exit(0);
}

await main();
