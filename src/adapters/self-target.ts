// No plugin may point at the Core's own HTTP listener. An HTTP or MCP plugin whose URL is the Core's
// API, carrying the admin token in its headers, would let anyone who may invoke plugins (a chat user, a
// channel) act as the administrator. A URL targets the Core when it names the Core's port on this
// machine under any name: loopback (127.0.0.0/8, ::1, "localhost"), the unspecified address (0.0.0.0,
// ::) which reaches a listener on all interfaces, any address of this machine's interfaces, or a host
// name that resolves to one of those. Other ports of this machine stay allowed (plugins often run
// beside the Core).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { JsonValue, PluginDescriptor, ValidationIssue } from '../protocol/types.js';
import { readMcpConfig } from './mcp-config.js';

export interface SelfTargetOptions {
  /** The port the Core's HTTP API listens on; undefined while it is not known (nothing is refused). */
  port: () => number | undefined;
  /** Host name → addresses (default: the system resolver, every address). */
  resolve?: (host: string) => Promise<string[]>;
  /** Addresses of this machine (default: every interface address). */
  ownAddresses?: () => string[];
  /** How long a host name's resolution is reused (default 5 s). */
  dns_cache_ms?: number;
}

/** A verdict: the reason the URL reaches the Core, or undefined. Synchronous unless a name must be resolved. */
export type TargetVerdict = string | undefined;

const LOOPBACK_NAMES = /(^|\.)localhost$/;
const INTERFACE_REFRESH_MS = 5_000;
const DNS_CACHE_LIMIT = 1_000;

async function resolveAll(host: string): Promise<string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .flatMap((entry) => (entry ? [entry.address.split('%')[0] as string] : []));
}

function defaultPort(protocol: string): number | undefined {
  if (protocol === 'http:' || protocol === 'ws:') return 80;
  if (protocol === 'https:' || protocol === 'wss:') return 443;
  return undefined;
}

export class SelfTargetGuard {
  private readonly resolve: (host: string) => Promise<string[]>;
  private readonly ownAddresses: () => string[];
  private readonly dnsCacheMs: number;
  private readonly dnsCache = new Map<string, { addresses: string[]; expires: number }>();
  private machine: { list: BlockList; expires: number } | undefined;

  constructor(private readonly options: SelfTargetOptions) {
    this.resolve = options.resolve ?? resolveAll;
    this.ownAddresses = options.ownAddresses ?? interfaceAddresses;
    this.dnsCacheMs = options.dns_cache_ms ?? 5_000;
  }

  /**
   * Why this URL reaches the Core's own HTTP listener, or undefined when it does not (or is no http(s)
   * URL at all: other checks report that). Only a URL on the Core's port costs more than a comparison.
   */
  check(target: string | URL): TargetVerdict | Promise<TargetVerdict> {
    const corePort = this.options.port();
    if (!corePort) return undefined;
    // Off the default ports, only a URL that spells out the Core's port (perhaps with leading zeros) can
    // reach it: most calls stop here, without parsing.
    if (typeof target === 'string' && corePort !== 80 && corePort !== 443 && !target.includes(String(corePort))) return undefined;
    let url: URL;
    try {
      url = typeof target === 'string' ? new URL(target) : target;
    } catch {
      return undefined;
    }
    const schemePort = defaultPort(url.protocol);
    if (schemePort === undefined) return undefined;
    const port = url.port ? Number(url.port) : schemePort;
    if (port !== corePort) return undefined;
    const host = url.hostname
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, '')
      .toLowerCase();
    const reason = `${url.origin} is the Core's own HTTP API (this machine, port ${corePort}); a plugin may not call the Core itself`;
    if (isIP(host)) return this.isThisMachine(host) ? reason : undefined;
    if (LOOPBACK_NAMES.test(host)) return reason;
    return this.resolveCached(host).then((addresses) => (addresses.some((address) => this.isThisMachine(address)) ? reason : undefined));
  }

  /** Every place a descriptor points to over HTTP that reaches the Core, each with its path. */
  async descriptorProblems(descriptor: Pick<PluginDescriptor, 'type' | 'config' | 'capabilities' | 'health_check_url'>): Promise<ValidationIssue[]> {
    const targets: { path: string; url: string }[] = [];
    const add = (path: string, value: JsonValue | undefined): void => {
      if (typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) targets.push({ path, url: value });
    };
    add('/health_check_url', descriptor.health_check_url);
    const config = descriptor.config;
    if (descriptor.type === 'http') {
      add('/config/base_url', config.base_url);
      add('/config/path', config.path);
      descriptor.capabilities.forEach((capability, index) => {
        add(`/capabilities/${index}/path`, capability.path);
      });
    } else if (descriptor.type === 'mcp') {
      const mcp = readMcpConfig(config);
      if (mcp.ok && mcp.settings.connection.transport !== 'stdio')
        add(config.url !== undefined ? '/config/url' : '/config/base_url', mcp.settings.connection.url);
    }
    const problems: ValidationIssue[] = [];
    for (const { path, url } of targets) {
      const verdict = await this.check(url);
      if (verdict) problems.push({ path, message: verdict });
    }
    return problems;
  }

  private isThisMachine(address: string): boolean {
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    return this.machineAddresses().check(address, family);
  }

  private machineAddresses(): BlockList {
    const now = Date.now();
    if (this.machine && this.machine.expires > now) return this.machine.list;
    const list = new BlockList();
    list.addSubnet('127.0.0.0', 8, 'ipv4');
    list.addAddress('0.0.0.0', 'ipv4');
    list.addAddress('::1', 'ipv6');
    list.addAddress('::', 'ipv6');
    for (const address of this.ownAddresses()) {
      const version = isIP(address);
      if (version) list.addAddress(address, version === 6 ? 'ipv6' : 'ipv4');
    }
    // Interfaces come and go (DHCP, VPN): re-read them now and then, never on every call.
    this.machine = { list, expires: now + INTERFACE_REFRESH_MS };
    return list;
  }

  private async resolveCached(host: string): Promise<string[]> {
    const now = Date.now();
    const cached = this.dnsCache.get(host);
    if (cached && cached.expires > now) return cached.addresses;
    let addresses: string[];
    try {
      addresses = await this.resolve(host);
    } catch {
      // A name that does not resolve reaches nothing, the Core included; the call will say so itself.
      addresses = [];
    }
    if (this.dnsCache.size >= DNS_CACHE_LIMIT) this.dnsCache.clear();
    this.dnsCache.set(host, { addresses, expires: now + this.dnsCacheMs });
    return addresses;
  }
}
