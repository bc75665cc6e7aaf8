import dns from 'node:dns';
import net from 'node:net';
import { buildConnector } from 'undici';

/** The attempt error of a delivery refused because of where it would connect. */
export const DESTINATION_NOT_ALLOWED = 'destination address not allowed';

export interface DestinationPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: loopback, private, link-local, ... are allowed (cloud metadata never is). */
  allowPrivateNetworks: boolean;
}

export class DestinationNotAllowedError extends Error {
  readonly code = 'ERR_WEBHOOK_DESTINATION_NOT_ALLOWED';
  constructor(
    readonly address: string,
    readonly range: string,
  ) {
    super(`${DESTINATION_NOT_ALLOWED}: ${address} is ${range}`);
    this.name = 'DestinationNotAllowedError';
  }
}

const CLOUD_METADATA = 'cloud metadata';

type V4Range = [network: number, bits: number, label: string];
type V6Range = [network: bigint, bits: number, label: string];

const v4 = (text: string): number => text.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);

/** Checked in order: the first match names the range (metadata before the link-local or private range holding it). */
const V4_RANGES: V4Range[] = (
  [
    ['169.254.169.254', 32, CLOUD_METADATA],
    ['169.254.170.2', 32, CLOUD_METADATA],
    ['100.100.100.200', 32, CLOUD_METADATA],
    ['0.0.0.0', 8, 'unspecified'],
    ['10.0.0.0', 8, 'private'],
    ['100.64.0.0', 10, 'carrier-grade NAT'],
    ['127.0.0.0', 8, 'loopback'],
    ['169.254.0.0', 16, 'link-local'],
    ['172.16.0.0', 12, 'private'],
    ['192.0.0.0', 24, 'reserved'],
    ['192.168.0.0', 16, 'private'],
    ['198.18.0.0', 15, 'reserved'],
    ['224.0.0.0', 4, 'multicast'],
    ['240.0.0.0', 4, 'reserved'],
  ] as const
).map(([a, bits, label]) => [v4(a), bits, label]);

function v6(text: string): bigint {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const [head = '', tail] = s.split('::');
  const groups = (part: string) =>
    part
      ? part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [Number.parseInt(g, 16)];
          const n = v4(g);
          return [Math.floor(n / 65536), n % 65536];
        })
      : [];
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  return all.reduce((n, g) => (n << 16n) | BigInt(g), 0n);
}

const V6_RANGES: V6Range[] = (
  [
    ['fd00:ec2::254', 128, CLOUD_METADATA],
    ['::', 128, 'unspecified'],
    ['::1', 128, 'loopback'],
    ['::', 96, 'reserved'],
    ['100::', 64, 'reserved'],
    ['fc00::', 7, 'private'],
    ['fe80::', 10, 'link-local'],
    ['fec0::', 10, 'private'],
    ['ff00::', 8, 'multicast'],
  ] as const
).map(([a, bits, label]) => [v6(a), bits, label]);

/** IPv6 forms that carry an IPv4 address the packet really goes to: mapped, NAT64 and 6to4. */
const V6_EMBEDDING: [network: bigint, bits: number, shift: bigint][] = [
  [v6('::ffff:0:0'), 96, 0n],
  [v6('64:ff9b::'), 96, 0n],
  [v6('2002::'), 16, 80n],
];

const inV4 = (addr: number, [network, bits]: V4Range) =>
  bits === 0 || Math.floor(addr / 2 ** (32 - bits)) === Math.floor(network / 2 ** (32 - bits));
const inV6 = (addr: bigint, network: bigint, bits: number) => addr >> BigInt(128 - bits) === network >> BigInt(128 - bits);

/**
 * The special-purpose range an IP address belongs to ('loopback', 'private', 'cloud metadata', ...), or null
 * for a public address. Not an IP address: null (host names are checked once resolved).
 */
export function specialRange(address: string): string | null {
  const family = net.isIP(address);
  if (family === 4) {
    const n = v4(address);
    return V4_RANGES.find((r) => inV4(n, r))?.[2] ?? null;
  }
  if (family !== 6) return null;
  const n = v6(address);
  for (const [network, bits, shift] of V6_EMBEDDING) {
    if (inV6(n, network, bits)) {
      const embedded = Number((n >> shift) & 0xffffffffn);
      const text = [24, 16, 8, 0].map((s) => (embedded >>> s) & 255).join('.');
      return specialRange(text);
    }
  }
  return V6_RANGES.find(([network, bits]) => inV6(n, network, bits))?.[2] ?? null;
}

/** Why the policy refuses this IP address, or null when it may be connected to. */
export function refusedRange(address: string, policy: DestinationPolicy): string | null {
  const range = specialRange(address);
  if (range === null) return null;
  if (range === CLOUD_METADATA) return range;
  return policy.allowPrivateNetworks ? null : range;
}

const hostOf = (url: string): string => {
  const host = new URL(url).hostname;
  return host.startsWith('[') ? host.slice(1, -1) : host;
};

/** For a URL whose host is an IP literal: why the policy refuses it, or null. Host names are checked when sending. */
export function refusedLiteral(url: string, policy: DestinationPolicy): string | null {
  const host = hostOf(url);
  if (!net.isIP(host)) return null;
  const range = refusedRange(host, policy);
  return range && `${host} is ${range}`;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect that resolves the host once and refuses it when any address is in a refused
 * range. The socket connects to exactly the addresses checked here, so a DNS answer cannot change in between.
 */
export function guardedLookup(policy: DestinationPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { family: options.family, hints: options.hints, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const a of addresses) {
        const range = refusedRange(a.address, policy);
        if (range) return callback(new DestinationNotAllowedError(a.address, range), []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * undici's connector with the destination check at connect time: IP literals are checked here (Node does not
 * look them up), host names in the guarded lookup.
 */
export function guardedConnector(policy: DestinationPolicy, options: buildConnector.BuildOptions = {}): buildConnector.connector {
  const connect = buildConnector({ ...options, lookup: guardedLookup(policy) } as buildConnector.BuildOptions);
  return (opts, callback) => {
    if (net.isIP(opts.hostname)) {
      const range = refusedRange(opts.hostname, policy);
      if (range) return void queueMicrotask(() => callback(new DestinationNotAllowedError(opts.hostname, range), null));
    }
    connect(opts, callback);
  };
}
