// Which WebSocket upgrades may speak MQTT. Browsers let any web page open a WebSocket to any address,
// loopback included, and name the page's origin in the upgrade; MQTT libraries mostly send no origin.
// So an upgrade with an origin is a web page, refused unless the operator listed it, with one exception:
// paho-mqtt names the broker's own address as its origin (https://<host>:<port>). That is accepted when
// it equals the Host of the request and is an IP address or localhost: no page can come from there (the
// listener serves none), and, unlike a DNS name, such an address cannot be rebound to an attacker's page.
import { isIP } from 'node:net';

export function mayOpenMqttWebSocket(origin: string | undefined, host: string | undefined, allowedOrigins: ReadonlySet<string>): boolean {
  if (origin === undefined) return true;
  const normalized = origin.toLowerCase();
  if (allowedOrigins.has(normalized)) return true;
  if (host === undefined) return false;
  let url: URL;
  try {
    url = new URL(normalized);
  } catch {
    return false;
  }
  const requested = host.toLowerCase();
  if (url.host !== requested) return false;
  const name = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return name === 'localhost' || isIP(name) !== 0;
}
