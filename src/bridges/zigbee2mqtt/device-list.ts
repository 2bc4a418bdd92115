// Which entries of Zigbee2MQTT's device list become plugins, and under which ids.
import { createHash } from 'node:crypto';
import type { Z2mDefinition, Z2mDevice } from '../../protocol/zigbee2mqtt.js';

export const PLUGIN_ID_PREFIX = 'z2m-';
const MAX_SLUG = 64 - PLUGIN_ID_PREFIX.length;

export type DeviceVerdict = { bridge: true; device: Z2mDevice & { definition: Z2mDefinition } } | { bridge: false; reason: string };

/**
 * Only devices a user can use are bridged: not the coordinator (Zigbee2MQTT's own radio), not devices
 * disabled in Zigbee2MQTT, not devices whose interview is still running (their definition is not known
 * yet) and not devices Zigbee2MQTT has no definition for.
 */
export function classifyDevice(device: Z2mDevice): DeviceVerdict {
  const badName = friendlyNameProblem(device.friendly_name);
  if (badName) return { bridge: false, reason: `its friendly name ${JSON.stringify(device.friendly_name)} ${badName}` };
  if (device.type === 'Coordinator') return { bridge: false, reason: "it is the coordinator (Zigbee2MQTT's own radio)" };
  if (device.disabled === true) return { bridge: false, reason: 'it is disabled in Zigbee2MQTT' };
  const state = device.interview_state;
  const interviewing =
    state === 'PENDING' || state === 'IN_PROGRESS' || (state === undefined && (device.interviewing === true || device.interview_completed === false));
  if (interviewing) return { bridge: false, reason: 'its interview has not finished yet' };
  if (!device.definition) return { bridge: false, reason: 'Zigbee2MQTT has no definition for it (unsupported device)' };
  return { bridge: true, device: device as Z2mDevice & { definition: Z2mDefinition } };
}

/**
 * Zigbee2MQTT refuses such names itself (validateFriendlyName); one in the list anyway (an old or forged
 * list) would make the Core publish on a wildcard or malformed topic, so it is not bridged.
 */
function friendlyNameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'is empty';
  if (name.startsWith('/') || name.endsWith('/')) return 'starts or ends with /';
  if (name.includes('+') || name.includes('#')) return 'contains an MQTT wildcard (+ or #)';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this check's job.
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character';
  if (['bridge/devices', 'bridge/event', 'bridge/state'].includes(name)) return "is one of Zigbee2MQTT's own topics";
  return undefined;
}

/**
 * The id part made from a friendly name: lowercase ASCII letters and digits joined by '-'
 * ("Living Room/Ceiling Light" → "living-room-ceiling-light", "Küche" → "kuche"). Too long a name is cut
 * and given a short hash so two long names that share a start stay apart.
 */
export function slugOf(friendlyName: string): string {
  const slug = friendlyName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (slug.length <= MAX_SLUG) return slug;
  const hash = createHash('sha256').update(friendlyName).digest('hex').slice(0, 6);
  return `${slug.slice(0, MAX_SLUG - 7).replace(/-+$/, '')}-${hash}`;
}

/**
 * Plugin ids for the bridged devices, in list order: `z2m-<slug>`. A name without any letter or digit
 * uses the IEEE address; when two names give the same slug, the later one gets the end of its IEEE
 * address appended. A device whose name did not change keeps the id it had (`previous`, by IEEE
 * address), so ids stay stable however Zigbee2MQTT orders its list.
 */
export function assignPluginIds(
  devices: readonly { ieee_address: string; friendly_name: string }[],
  previous: ReadonlyMap<string, { plugin_id: string; friendly_name: string }> = new Map(),
): Map<string, string> {
  const ids = new Map<string, string>();
  const taken = new Set<string>();
  for (const device of devices) {
    const before = previous.get(device.ieee_address);
    if (before && before.friendly_name === device.friendly_name && !taken.has(before.plugin_id)) {
      ids.set(device.ieee_address, before.plugin_id);
      taken.add(before.plugin_id);
    }
  }
  for (const device of devices) {
    if (ids.has(device.ieee_address)) continue;
    const ieee = device.ieee_address.toLowerCase().replace(/[^a-z0-9]/g, '');
    const base = slugOf(device.friendly_name) || ieee.slice(0, MAX_SLUG);
    let id = `${PLUGIN_ID_PREFIX}${base}`;
    for (let n = 1; taken.has(id); n++) {
      const suffix = n === 1 ? `-${ieee.slice(-6)}` : `-${ieee.slice(-6)}-${n}`;
      id = `${PLUGIN_ID_PREFIX}${base.slice(0, MAX_SLUG - suffix.length)}${suffix}`;
    }
    taken.add(id);
    ids.set(device.ieee_address, id);
  }
  return ids;
}
