// The `homeclaw` commands about who may do what: credentials list|remove|rotate, users add|list|remove|
// rotate, plugins transfer, audit. Each one is a call to the running Core's HTTP API (admin token).
import type { Command } from 'commander';
import { parsePointInTime } from '../access/time-window.js';
import { describeApiError, type CoreClient } from './core-client.js';
import { textTable } from './table.js';
import type { AuditEntry } from '../access/audit-log.js';

export interface CliIo {
  out(text: string): void;
  /** Prints the error and exits (1: the operation failed, 2: usage or connection). */
  fail(message: string, code?: number): never;
  withClient<T>(fn: (client: CoreClient) => Promise<T>): Promise<T>;
}

/** An audit entry as GET /api/audit returns it. */
type AuditRow = Omit<AuditEntry, 'id'>;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function registerCredentialCommands(credentials: Command, io: CliIo): void {
  credentials
    .command('list')
    .description('MQTT credentials (never their passwords)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const res = await io.withClient((c) =>
        c.request<{ credentials: { name: string; role: string; plugin_ids: string[]; channels: string[]; users?: string[] }[] }>('GET', '/api/credentials'),
      );
      if (res.status !== 200) io.fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body.credentials, null, 2));
      if (res.body.credentials.length === 0) return io.out('no credentials');
      const scope = (c: { role: string; plugin_ids: string[]; channels: string[]; users?: string[] }): string =>
        c.role === 'plugin'
          ? `plugin ids: ${c.plugin_ids.join(',')}`
          : c.role === 'channel'
            ? `channels: ${c.channels.join(',')}; users: ${(c.users ?? []).join(',')}`
            : c.role === 'caller'
              ? `calls for users: ${(c.users ?? []).join(',')}`
              : 'everything';
      io.out(
        textTable(
          ['NAME', 'ROLE', 'MAY ACT FOR'],
          res.body.credentials.map((c) => [c.name, c.role, scope(c)]),
        ),
      );
    });

  credentials
    .command('remove <name>')
    .description('delete a credential and disconnect its live sessions')
    .action(async (name: string) => {
      const res = await io.withClient((c) => c.request<{ disconnected?: number }>('DELETE', `/api/credentials/${encodeURIComponent(name)}`));
      if (res.status >= 300) io.fail(describeApiError(res.body));
      io.out(`removed ${name}; disconnected ${plural(res.body.disconnected ?? 0, 'session')}`);
    });

  credentials
    .command('rotate <name>')
    .description('issue a new password (printed once); the old one stops working and its sessions are disconnected')
    .option('--json', 'print JSON')
    .action(async (name: string, options: { json?: boolean }) => {
      const res = await io.withClient((c) =>
        c.request<{ name: string; password: string; disconnected?: number }>('POST', `/api/credentials/${encodeURIComponent(name)}/rotate`),
      );
      if (res.status >= 300) io.fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body));
      io.out(
        `username: ${res.body.name}\npassword: ${res.body.password}\n(the password is shown only once; disconnected ${plural(res.body.disconnected ?? 0, 'session')})`,
      );
    });
}

function registerUserCommands(program: Command, io: CliIo): void {
  const users = program.command('users').description('people with their own HTTP token: messages, their profile, search, /mcp');
  users
    .command('add <id>')
    .description('create a user token (printed once; only its hash is stored)')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const res = await io.withClient((c) => c.request<{ user_id: string; token: string }>('POST', '/api/users', { user_id: id }));
      if (res.status >= 300) io.fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body));
      io.out(`user: ${res.body.user_id}\ntoken: ${res.body.token}\n(the token is shown only once; send it as "Authorization: Bearer <token>")`);
    });
  users
    .command('list')
    .description('users with a token (never the tokens)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const res = await io.withClient((c) => c.request<{ users: { user_id: string; created_at: number; last_used_at: number | null }[] }>('GET', '/api/users'));
      if (res.status !== 200) io.fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body.users, null, 2));
      if (res.body.users.length === 0) return io.out('no users');
      const when = (ms: number | null): string => (ms === null ? 'never' : new Date(ms).toISOString());
      io.out(
        textTable(
          ['USER', 'CREATED', 'LAST USED'],
          res.body.users.map((u) => [u.user_id, when(u.created_at), when(u.last_used_at)]),
        ),
      );
    });
  users
    .command('remove <id>')
    .description("delete a user's token (it stops working at once)")
    .action(async (id: string) => {
      const res = await io.withClient((c) => c.request('DELETE', `/api/users/${encodeURIComponent(id)}`));
      if (res.status >= 300) io.fail(describeApiError(res.body));
      io.out(`removed user ${id}`);
    });
  users
    .command('rotate <id>')
    .description('issue a new token for a user (printed once); the old one stops working')
    .action(async (id: string) => {
      const res = await io.withClient((c) => c.request<{ user_id: string; token: string }>('POST', `/api/users/${encodeURIComponent(id)}/rotate`));
      if (res.status >= 300) io.fail(describeApiError(res.body));
      io.out(`user: ${res.body.user_id}\ntoken: ${res.body.token}\n(the token is shown only once)`);
    });
}

function registerAuditCommand(program: Command, io: CliIo): void {
  program
    .command('audit')
    .description('who invoked which plugin, when, through which channel, and how it ended (newest first)')
    .option('--user <id>', 'only this user')
    .option('--plugin <id>', 'only this plugin')
    .option('--channel <name>', 'only this channel')
    .option('--outcome <outcome>', 'only this outcome (ok, forbidden, timeout, ...)')
    .option('--since <when>', 'from: 30m, 1h, 7d, an ISO date or date-time')
    .option('--until <when>', 'until: the same forms')
    .option('--limit <n>', 'at most n entries (default 100)')
    .option('--json', 'print JSON')
    .action(async (options: Record<string, string | boolean | undefined>) => {
      const query = new URLSearchParams();
      for (const key of ['user', 'plugin', 'channel', 'outcome', 'limit'] as const) {
        const value = options[key];
        if (typeof value === 'string') query.set(key, value);
      }
      // Times are resolved here so "1h" means an hour before this command, whatever the Core's clock.
      for (const key of ['since', 'until'] as const) {
        const value = options[key];
        if (typeof value !== 'string') continue;
        const parsed = parsePointInTime(value);
        if (!parsed.ok) io.fail(`--${key}: ${parsed.error}`);
        query.set(key, String(parsed.ms));
      }
      const res = await io.withClient((c) => c.request<{ entries: AuditRow[] }>('GET', `/api/audit?${query.toString()}`));
      if (res.status !== 200) io.fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body.entries, null, 2));
      if (res.body.entries.length === 0) return io.out('no audit entries match');
      const rows = res.body.entries.map((e) => [
        new Date(e.ts).toISOString(),
        e.user_id ?? '(admin)',
        e.channel ?? '-',
        e.plugin_id,
        e.capability_id,
        e.outcome,
        String(e.duration_ms),
      ]);
      io.out(textTable(['TIME', 'USER', 'CHANNEL', 'PLUGIN', 'CAPABILITY', 'OUTCOME', 'MS'], rows));
    });
}

export function registerAccessCommands(program: Command, groups: { credentials: Command; plugins: Command }, io: CliIo): void {
  registerCredentialCommands(groups.credentials, io);
  registerUserCommands(program, io);
  registerAuditCommand(program, io);
  groups.plugins
    .command('transfer <id> <credential>')
    .description('give an MQTT plugin id to another plugin credential (e.g. after moving from loopback to LAN mode)')
    .action(async (id: string, credential: string) => {
      const res = await io.withClient((c) =>
        c.request<{ owner: string; previous_owner: string }>('POST', `/api/plugins/${encodeURIComponent(id)}/transfer`, { credential }),
      );
      if (res.status >= 300) io.fail(describeApiError(res.body));
      io.out(`${id} now belongs to credential ${credential} (was ${res.body.previous_owner})`);
    });
}
