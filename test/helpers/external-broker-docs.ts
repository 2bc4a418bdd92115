// The Mosquitto configuration that docs/external-broker-acl.md gives users, read from the page itself so
// the tests check exactly what a user copies.
import { readFileSync } from 'node:fs';

function docsBlock(name: string): string {
  const doc = readFileSync(new URL('../../docs/external-broker-acl.md', import.meta.url), 'utf8');
  const match = new RegExp(`<!-- ${name}:start -->\\s*\`\`\`text\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`).exec(doc);
  if (!match) throw new Error(`${name} block not found in docs/external-broker-acl.md`);
  return match[1]!;
}

/** The ACL file. */
export function aclFromDocs(): string {
  return docsBlock('acl-file');
}

/** The lines to add to mosquitto.conf. */
export function mosquittoConfFromDocs(): string {
  return docsBlock('mosquitto-conf');
}

/** The ACL file with the block that keeps Home Assistant's own login unrestricted. */
export function aclWithHomeAssistantFromDocs(): string {
  const doc = readFileSync(new URL('../../docs/external-broker-acl.md', import.meta.url), 'utf8');
  const homeAssistant = /```text\n(user homeassistant\n[\s\S]*?)```/.exec(doc)?.[1];
  if (!homeAssistant) throw new Error('the Home Assistant ACL block was not found in docs/external-broker-acl.md');
  return `${aclFromDocs()}\n${homeAssistant}`;
}
