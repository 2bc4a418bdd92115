#!/usr/bin/env node
// The `homeclaw` command. `start` runs the Core; every other command talks to a running Core over its
// HTTP API (HOMECLAW_URL, bearer token from HOMECLAW_ADMIN_TOKEN or <data dir>/admin.token).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Command, Option } from 'commander';
import { parse as parseYaml } from 'yaml';
import { CoreClient, CoreClientError, describeApiError } from './cli/core-client.js';
import { coerceParameters, parseKeyValues } from './cli/kv-args.js';
import { registerChatCommands } from './cli/chat.js';
import { registerDoctorCommand } from './cli/doctor-command.js';
import { registerAccessCommands } from './cli/access-commands.js';
import { registerOAuthCommands } from './cli/oauth-commands.js';
import { runSearchCommand } from './cli/search-command.js';
import { textTable } from './cli/table.js';
import { ConfigError, EMBEDDED_DISCOVERY_WARNING, startCore } from './main.js';
import type { ParameterSpec, PluginResult } from './protocol/types.js';
import { parseProfileAssignments } from './conversation/profile-store.js';
import { packageVersion } from './kit/package-version.js';
import { v8HelperThreads, v8HelperThreadsAdvice } from './lifecycle/v8-helper-threads.js';

interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

const io: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

/** Exit codes: 0 ok, 1 the operation failed, 2 usage or connection problem. */
function fail(message: string, code = 1): never {
  io.err(`error: ${message}`);
  process.exit(code);
}

async function withClient<T>(fn: (client: CoreClient) => Promise<T>): Promise<T> {
  try {
    return await fn(new CoreClient());
  } catch (err) {
    if (err instanceof CoreClientError) fail(err.message, 2);
    throw err;
  }
}

function readDescriptorFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    fail(`cannot read ${file}: ${(err as Error).message}`, 2);
  }
  try {
    return file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    fail(`${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message}`, 2);
  }
}

function formatProfile(user: string, profile: Record<string, unknown>): string {
  const keys = Object.keys(profile);
  if (keys.length === 0) return `${user}: empty profile`;
  return [`${user}:`, ...keys.map((k) => `  ${k}: ${typeof profile[k] === 'string' ? String(profile[k]) : JSON.stringify(profile[k])}`)].join('\n');
}

export function buildProgram(): Command {
  const program = new Command('homeclaw').description('HomeClaw Bus: the plugin bus of a home AI assistant').version(packageVersion()).showHelpAfterError();

  program
    .command('start')
    .description('run the Core (embedded broker, registry, HTTP API) until interrupted')
    .option('-c, --config <file>', 'YAML config file (default: embedded defaults + environment)')
    .addOption(
      new Option(
        '--log-format <format>',
        'pretty: one readable line per event; json: JSON lines (default: pretty on a terminal, env HOMECLAW_LOG_FORMAT)',
      ).choices(['pretty', 'json', 'auto']),
    )
    .action(async (options: { config?: string; logFormat?: string }) => {
      try {
        const core = await startCore({
          ...(options.config ? { file: options.config } : {}),
          ...(options.logFormat ? { overrides: { log_format: options.logFormat } } : {}),
        });
        if (core.ctx.config.homeassistant.discovery && core.mqttPort !== null) io.err(`warning: ${EMBEDDED_DISCOVERY_WARNING}`);
        // Through the Core's log, so that piped JSON lines stay JSON lines.
        const helperThreads = v8HelperThreads(process.execArgv, process.env['NODE_OPTIONS']);
        const gcAdvice = v8HelperThreadsAdvice(helperThreads, availableParallelism());
        if (gcAdvice) core.ctx.log.warn({ v8_helper_threads: helperThreads, cores: availableParallelism() }, gcAdvice);
        io.err(
          `HomeClaw Core running: MQTT ${core.mqttPort !== null ? `mqtt://${core.ctx.config.broker.host}:${core.mqttPort}` : core.ctx.config.broker.url}, HTTP ${core.httpUrl}`,
        );
        const shutdown = (): void => {
          void core.stop().then(() => process.exit(0));
        };
        process.once('SIGINT', shutdown);
        process.once('SIGTERM', shutdown);
      } catch (err) {
        if (err instanceof ConfigError) fail(err.message, 2);
        fail(`the Core could not start: ${(err as Error).message}`, 1);
      }
    });

  const plugins = program.command('plugins').description('list, register and inspect plugins');

  plugins
    .command('list')
    .description('registered plugins: id, type, source, state, capabilities')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const res = await withClient((c) =>
        c.request<{ plugins: { id: string; type: string; source: string; state: string; capabilities: string[] }[] }>('GET', '/api/plugins'),
      );
      if (res.status !== 200) fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body.plugins, null, 2));
      if (res.body.plugins.length === 0) return io.out('no plugins registered');
      io.out(
        textTable(
          ['ID', 'TYPE', 'SOURCE', 'STATE', 'CAPABILITIES'],
          res.body.plugins.map((p) => [p.id, p.type, p.source, p.state, p.capabilities.join(',')]),
        ),
      );
    });

  plugins
    .command('register <file>')
    .description('register an external plugin (http | subprocess | mcp | mqtt) from a YAML or JSON descriptor')
    .action(async (file: string) => {
      const descriptor = readDescriptorFile(file);
      const res = await withClient((c) => c.request<{ plugin_id?: string; change?: string }>('POST', '/api/plugins/register', descriptor));
      if (res.status >= 300) fail(describeApiError(res.body));
      io.out(`registered ${res.body.plugin_id} (${res.body.change})`);
    });

  plugins
    .command('unregister <id>')
    .description('remove an external plugin')
    .action(async (id: string) => {
      const res = await withClient((c) => c.request('POST', '/api/plugins/unregister', { plugin_id: id }));
      if (res.status >= 300) fail(describeApiError(res.body));
      io.out(`unregistered ${id}`);
    });

  plugins
    .command('health <id>')
    .description("check a plugin's health now")
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const res = await withClient((c) => c.request<{ ok?: boolean; state?: string; detail?: string }>('GET', `/api/plugins/health/${encodeURIComponent(id)}`));
      if (res.status >= 300) fail(describeApiError(res.body));
      if (options.json) io.out(JSON.stringify(res.body, null, 2));
      else io.out(`${id}: ${res.body.ok ? 'healthy' : 'unhealthy'} (state ${res.body.state})${res.body.detail ? ` - ${res.body.detail}` : ''}`);
      if (!res.body.ok) process.exitCode = 1;
    });

  plugins
    .command('search <text>')
    .description('find the plugins that match a request, as the Core would for a user message')
    .option('-k <n>', 'how many plugins (default from config)')
    .option('--json', 'print JSON')
    .action(async (text: string, options: { k?: string; json?: boolean }) => {
      const output = await withClient((c) => runSearchCommand(c, text, options));
      if (output.exitCode === 0) io.out(output.text);
      else io.err(output.text);
      process.exitCode = output.exitCode;
    });

  program
    .command('mcp')
    .description("serve every plugin capability as MCP tools over stdio (proxy to the running Core's /mcp)")
    .action(async () => {
      // Runs until stdin closes; stdout belongs to the MCP protocol from here on.
      await import('./api/mcp-stdio-main.js');
    });

  registerChatCommands(program);
  registerDoctorCommand(program);

  program
    .command('invoke <plugin> <capability> [params...]')
    .description('invoke a capability with key=value parameters; exits non-zero on failure')
    .option('--json', 'print the whole PluginResult as JSON')
    .option('--confirm', 'confirm a capability that requires confirmation (unlocking, buying, deleting)')
    .action(async (pluginId: string, capabilityId: string, params: string[], options: { json?: boolean; confirm?: boolean }) => {
      const { values, errors } = parseKeyValues(params);
      if (errors.length > 0) fail(`${errors.join('; ')} (use key=value)`, 2);
      const result = await withClient(async (c) => {
        const plugin = await c.request<{ capabilities?: { id: string; parameters: ParameterSpec[] }[] }>('GET', `/api/plugins/${encodeURIComponent(pluginId)}`);
        const capability = plugin.body.capabilities?.find((cap) => cap.id === capabilityId);
        const parameters = coerceParameters(values, capability?.parameters ?? []);
        return c.request<PluginResult>(
          'POST',
          `/v1/plugins/${encodeURIComponent(pluginId)}/tools/${encodeURIComponent(capabilityId)}/run${options.confirm ? '?confirmed=true' : ''}`,
          parameters,
        );
      });
      const body = result.body;
      if (options.json) io.out(JSON.stringify(body, null, 2));
      else if (body.success) io.out(body.text ?? JSON.stringify(body.data ?? null, null, 2));
      else if (typeof body.success === 'boolean') {
        io.err(`failed${body.error_code ? ` (${body.error_code})` : ''}: ${body.error ?? 'unknown error'}`);
        if (body.error_code === 'confirmation_required') io.err('run it again with --confirm once you are sure');
      } else io.err(describeApiError(body));
      if (!body.success) process.exitCode = 1;
    });

  const credentials = program.command('credentials').description('MQTT credentials for plugins, channels and admins');
  credentials
    .command('add <name>')
    .description('create a credential; the password is printed once')
    .addOption(new Option('--role <role>', 'what the client may do').choices(['plugin', 'channel', 'admin', 'zigbee2mqtt', 'caller']).makeOptionMandatory())
    .option('--plugin-ids <ids>', 'comma-separated plugin ids a plugin credential may use (default: the name)')
    .option('--channels <names>', 'comma-separated channels a channel credential may use (default: the name)')
    .option('--users <ids>', 'comma-separated users a channel credential may speak as, or a caller credential may call for (default: the name; * = anyone)')
    .option('--json', 'print JSON')
    .action(async (name: string, options: { role: string; pluginIds?: string; channels?: string; users?: string; json?: boolean }) => {
      const split = (s?: string): string[] | undefined =>
        s
          ?.split(',')
          .map((x) => x.trim())
          .filter(Boolean);
      const res = await withClient((c) =>
        c.request<{ name: string; password: string }>('POST', '/api/credentials', {
          name,
          role: options.role,
          ...(options.pluginIds ? { plugin_ids: split(options.pluginIds) } : {}),
          ...(options.channels ? { channels: split(options.channels) } : {}),
          ...(options.users ? { users: split(options.users) } : {}),
        }),
      );
      if (res.status >= 300) fail(describeApiError(res.body));
      if (options.json) io.out(JSON.stringify(res.body));
      else io.out(`username: ${res.body.name}\npassword: ${res.body.password}\n(the password is shown only once)`);
    });

  registerAccessCommands(program, { credentials, plugins }, { out: io.out, fail, withClient });
  registerOAuthCommands(program, { out: io.out, fail, withClient });

  const profile = program.command('profile').description("users' profiles (name, address, phone...) used to fill plugin parameters");
  profile
    .command('set <user> <values...>')
    .description('set profile values: homeclaw profile set alice address="12 Oak St" phone=555-0100')
    .action(async (user: string, values: string[]) => {
      const parsed = parseProfileAssignments(values);
      if (!parsed.ok) fail(parsed.error, 2);
      const res = await withClient((c) =>
        c.request<{ profile: Record<string, unknown> }>('POST', `/api/profiles/${encodeURIComponent(user)}`, { set: parsed.values }),
      );
      if (res.status >= 300) fail(describeApiError(res.body));
      io.out(formatProfile(user, res.body.profile));
    });
  profile
    .command('show <user>')
    .description("print a user's profile")
    .option('--json', 'print JSON')
    .action(async (user: string, options: { json?: boolean }) => {
      const res = await withClient((c) => c.request<{ profile: Record<string, unknown> }>('GET', `/api/profiles/${encodeURIComponent(user)}`));
      if (res.status >= 300) fail(describeApiError(res.body));
      io.out(options.json ? JSON.stringify(res.body.profile, null, 2) : formatProfile(user, res.body.profile));
    });

  return program;
}

await buildProgram().parseAsync(process.argv);
