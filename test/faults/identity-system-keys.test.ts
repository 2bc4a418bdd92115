// Attack (speaking for another user through a parameter). Plugins learn whose data to touch from a
// parameter bound to the system key user_id (and where to deliver from one bound to channel). Only the
// conversation filled those from the caller's identity; the dispatcher took whatever the caller sent. Over
// MCP, a user token for alice listed, cancelled and created bob's reminders by passing "user_id": "bob"
// (and the audit log recorded the calls as alice's). Defence: when a front door makes a call for a user,
// the dispatcher sets every identity-bound parameter from the call's context on every path, whatever the
// caller sent; a call made for no user (the admin token, the CLI) still names the user itself.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ensureBuilt, makePluginsDir } from '../e2e/helpers.js';
import { mcpClient } from './identity-helpers.js';

let core: TestCore;
let alice: Client;
let bob: Client;

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as { content: { type: string; text?: string }[]; isError?: boolean };
  return result.content.map((part) => part.text ?? '').join('\n');
}

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [{ id: 'reminders' }] }) });
  const token = async (user: string) => (await core.api<{ token: string }>('POST', '/api/users', { user_id: user })).body.token;
  alice = await mcpClient(core.httpUrl, await token('alice'));
  bob = await mcpClient(core.httpUrl, await token('bob'));
}, 120_000);

afterAll(async () => {
  await alice?.close();
  await bob?.close();
  await core?.cleanup();
});

describe('a parameter bound to the user id', () => {
  it("names the token's user over MCP, whatever the caller sends", async () => {
    // Bob does not have to name himself: the Core does.
    expect(await tool(bob, 'reminders__add', { text: 'take the pills', when: 'in 2 hours' })).toMatch(/take the pills/);
    expect(await tool(bob, 'reminders__list', {})).toMatch(/take the pills/);

    // Alice naming bob reads, cancels and creates only her own reminders.
    expect(await tool(alice, 'reminders__list', { user_id: 'bob' })).not.toMatch(/take the pills/);
    expect(await tool(alice, 'reminders__cancel', { which: '1', user_id: 'bob' })).not.toMatch(/Cancelled: #1 take the pills/);
    await tool(alice, 'reminders__add', { text: 'the alarm code changed', when: 'in 2 hours', user_id: 'bob' });
    const bobs = await tool(bob, 'reminders__list', {});
    expect(bobs).toMatch(/take the pills/);
    expect(bobs).not.toMatch(/alarm code/);
    expect(await tool(alice, 'reminders__list', {})).toMatch(/the alarm code changed/);
  });

  it("is the caller's choice on a call made for no user (the admin token)", async () => {
    const answer = await core.api<{ success: boolean; text: string }>('POST', '/v1/plugins/reminders/tools/list/run', { user_id: 'bob' });
    expect(answer.body).toMatchObject({ success: true });
    expect(answer.body.text).toMatch(/take the pills/);
  });
});
