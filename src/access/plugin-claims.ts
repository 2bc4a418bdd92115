// Who may take over a plugin id that another client registered.
//
// An id first registered by an anonymous client (loopback development mode) is owned by that client's
// MQTT client id, which nothing ties to a person. Once the Core requires credentials, the plugin logs in
// with a plugin credential; if that credential lists the id in its plugin_ids, it claims the id (the
// anonymous owner cannot come back: anonymous clients are refused, and a credentialed owner is never
// displaced this way). Ids owned by another credential move only by an admin's
// `homeclaw plugins transfer <id> <credential>`.
import type { PublisherIdentity } from '../bus/core-bus.js';

const ANONYMOUS_OWNER_PREFIX = 'mqtt:client:';

/**
 * Owner of an MQTT plugin an administrator registered over HTTP for a device that will only heartbeat:
 * the id belongs to no client yet. The first client that may use the id (a plugin credential listing it
 * in --plugin-ids; any client on a loopback-only broker; the external broker's clients, whose logins its
 * ACL ties to topics) claims it with its first heartbeat or registration, and owns it from then on.
 */
export const UNCLAIMED_OWNER = 'mqtt:unclaimed';

export function isAnonymousOwner(owner: string): boolean {
  return owner.startsWith(ANONYMOUS_OWNER_PREFIX);
}

export function mayClaimPluginId(existingOwner: string, publisher: PublisherIdentity | undefined, pluginId: string): boolean {
  if (existingOwner === UNCLAIMED_OWNER) {
    if (publisher === undefined || publisher.role === undefined || publisher.role === 'admin') return true;
    return publisher.role === 'plugin' && (publisher.pluginIds ?? []).includes(pluginId);
  }
  return isAnonymousOwner(existingOwner) && publisher?.role === 'plugin' && publisher.username !== undefined && (publisher.pluginIds ?? []).includes(pluginId);
}

/** The owner string of a credential, as the registry records MQTT owners. */
export function credentialOwner(credentialName: string): string {
  return `mqtt:user:${credentialName}`;
}
