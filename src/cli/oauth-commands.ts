// `homeclaw oauth clients add|list|remove` and `homeclaw oauth tokens list|revoke`: the OAuth clients that
// may ask for access to /mcp (Home Assistant's MCP integration...) and the grants people gave them. Each
// is a call to the running Core's HTTP API (admin token).
import type { Command } from 'commander';
import type { Principal } from '../access/principal.js';
import type { CliIo } from './access-commands.js';
import { describeApiError } from './core-client.js';
import { textTable } from './table.js';

interface ClientRow {
  client_id: string;
  name: string;
  redirect_uris: string[];
  source: string;
  created_at: number;
  last_used_at: number | null;
  client_secret?: string;
}

interface GrantRow {
  grant_id: string;
  client_id: string;
  client_name: string | null;
  acts_as: Principal;
  approved_by: Principal;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
}

const when = (ms: number | null): string => (ms === null ? 'never' : new Date(ms).toISOString());
const who = (principal: Principal): string => (principal.kind === 'admin' ? '(admin)' : principal.user_id);
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerOAuthCommands(program: Command, io: CliIo): void {
  const oauth = program.command('oauth').description('OAuth for /mcp: clients (e.g. Home Assistant) and the grants people gave them');
  const clients = oauth.command('clients').description('OAuth clients that may ask for access to /mcp');

  clients
    .command('add <name>')
    .description('add a client; its id and secret are printed once')
    .requiredOption('--redirect-uri <uri>', 'where the browser returns after the consent (repeat for several)', collect)
    .option('--json', 'print JSON')
    .action(async (name: string, options: { redirectUri: string[]; json?: boolean }) => {
      const res = await io.withClient((c) => c.request<ClientRow>('POST', '/api/oauth/clients', { name, redirect_uris: options.redirectUri }));
      if (res.status >= 300) io.fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body));
      io.out(
        `client: ${res.body.name}\nclient id: ${res.body.client_id}\nclient secret: ${res.body.client_secret ?? '(none)'}\n` +
          `redirect URIs: ${res.body.redirect_uris.join(', ')}\n(the secret is shown only once)`,
      );
    });

  clients
    .command('list')
    .description('OAuth clients (never their secrets)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const res = await io.withClient((c) => c.request<{ clients: ClientRow[] }>('GET', '/api/oauth/clients'));
      if (res.status !== 200) io.fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body.clients, null, 2));
      if (res.body.clients.length === 0) return io.out('no OAuth clients');
      const rows = res.body.clients.map((c) => [c.client_id, c.name, c.source, c.redirect_uris.join(' '), when(c.last_used_at)]);
      io.out(textTable(['CLIENT ID', 'NAME', 'ADDED BY', 'REDIRECT URIS', 'LAST USED'], rows));
    });

  clients
    .command('remove <client>')
    .description('remove a client (by id, or by name when unique); its grants end at once')
    .action(async (client: string) => {
      const res = await io.withClient((c) =>
        c.request<{ client_id: string; grants_revoked: number }>('DELETE', `/api/oauth/clients/${encodeURIComponent(client)}`),
      );
      if (res.status >= 300) io.fail(describeApiError(res.body));
      io.out(`removed ${res.body.client_id}; ended ${res.body.grants_revoked} grant${res.body.grants_revoked === 1 ? '' : 's'}`);
    });

  const tokens = oauth.command('tokens').description('grants: what a consent allowed a client, and its tokens');
  tokens
    .command('list')
    .description('live grants: client, who it acts as, who approved it')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const res = await io.withClient((c) => c.request<{ grants: GrantRow[] }>('GET', '/api/oauth/grants'));
      if (res.status !== 200) io.fail(describeApiError(res.body));
      if (options.json) return io.out(JSON.stringify(res.body.grants, null, 2));
      if (res.body.grants.length === 0) return io.out('no OAuth grants');
      const rows = res.body.grants.map((g) => [
        g.client_name ?? g.client_id,
        who(g.acts_as),
        who(g.approved_by),
        when(g.created_at),
        when(g.last_used_at),
        when(g.expires_at),
      ]);
      io.out(textTable(['CLIENT', 'ACTS AS', 'APPROVED BY', 'CREATED', 'LAST USED', 'EXPIRES'], rows));
    });
  tokens
    .command('revoke')
    .description('end grants (their access and refresh tokens) of a client, of a user, or all')
    .option('--client <client>', 'client id or name')
    .option('--user <id>', 'grants acting as this user')
    .option('--all', 'every grant')
    .action(async (options: { client?: string; user?: string; all?: boolean }) => {
      if (!options.client && !options.user && !options.all) io.fail('say what to revoke: --client <client>, --user <id> or --all', 2);
      const body = {
        ...(options.client ? { client: options.client } : {}),
        ...(options.user ? { user_id: options.user } : {}),
        ...(options.all ? { all: true } : {}),
      };
      const res = await io.withClient((c) => c.request<{ revoked: number }>('POST', '/api/oauth/tokens/revoke', body));
      if (res.status >= 300) io.fail(describeApiError(res.body));
      io.out(`ended ${res.body.revoked} grant${res.body.revoked === 1 ? '' : 's'}`);
    });
}
