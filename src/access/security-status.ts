// The access part of /api/status: in words, who can speak as whom right now. Anonymous loopback mode is
// fine for development and must never be mistaken for a protected setup, so it is said plainly.
import type { AuditLog } from './audit-log.js';
import type { PolicySummary } from './policy.js';

export type AccessMode = 'anonymous-loopback' | 'anonymous-lan' | 'credentials' | 'external-broker';

export interface AccessStatusInput {
  /** null with an external broker. */
  embedded: { anonymous: boolean; loopbackOnly: boolean } | null;
  credentials: number;
  users: number;
  channelBindings: string[];
  policy: PolicySummary;
  audit: ReturnType<AuditLog['status']>;
}

const NOTES: Record<AccessMode, string> = {
  'anonymous-loopback':
    'Development mode: anonymous MQTT clients are allowed because every listener is on loopback, so any process on this machine may connect and speak as any user. ' +
    'To bind users to credentials, create them (homeclaw credentials add <name> --role channel --users ...) and set broker.allow_anonymous: false, or open a listener to the LAN (which then requires logins).',
  'anonymous-lan':
    'WARNING: anonymous MQTT clients are allowed on a listener reachable from the network (broker.allow_anonymous: true): anyone on the LAN may speak as any user and register plugins.',
  credentials: 'MQTT clients must log in; a channel speaks only as the users bound to its credential (admin credentials may speak as anyone).',
  'external-broker':
    'External broker: the Core cannot see who published a message. The broker ACL (docs/external-broker-acl.md) must let only the login named like a channel publish on its input topic; ' +
    'each channel then speaks as access.channels.<channel>.users plus the users of its channel credential, or else only as the user named like the channel.',
};

export function accessMode(embedded: AccessStatusInput['embedded']): AccessMode {
  if (!embedded) return 'external-broker';
  if (!embedded.anonymous) return 'credentials';
  return embedded.loopbackOnly ? 'anonymous-loopback' : 'anonymous-lan';
}

export function accessStatus(input: AccessStatusInput): Record<string, unknown> {
  const mode = accessMode(input.embedded);
  return {
    mode,
    anonymous_mqtt: input.embedded?.anonymous ?? false,
    note: NOTES[mode],
    credentials: input.credentials,
    user_tokens: input.users,
    channel_bindings: input.channelBindings,
    policy: input.policy,
    audit: input.audit,
  };
}

export function accessModeNote(mode: AccessMode): string {
  return NOTES[mode];
}
