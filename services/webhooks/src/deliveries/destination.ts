import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';
import { CLOUD_METADATA, IPV4_SPECIAL, IPV6_SPECIAL, type SpecialBlock } from './special-addresses.js';

export const DESTINATION_NOT_ALLOWED = 'destination address not allowed';

export interface DestinationPolicy {
  /** Cloud metadata is never allowed. */
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

const METADATA = 'cloud metadata';

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;
type Block = { range: [Parsed, number]; label: string; global: boolean };

const blocks = (table: SpecialBlock[]): Block[] =>
  table
    .map(([cidr, label, global]) => ({ range: ipaddr.parseCIDR(cidr), label, global }))
    // Most specific first: the first match decides.
    .sort((a, b) => b.range[1] - a.range[1]);
const V4_BLOCKS = blocks(IPV4_SPECIAL);
const V6_BLOCKS = blocks(IPV6_SPECIAL);
const METADATA_ADDRESSES = new Set(CLOUD_METADATA.map(([a]) => ipaddr.parse(a).toNormalizedString()));
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

const v4Of = (bytes: number[]) => new ipaddr.IPv4(bytes);
const cidr = (text: string) => ipaddr.parseCIDR(text) as [ipaddr.IPv6, number];
const MAPPED = cidr('::ffff:0:0/96');
const TRANSLATED = cidr('::ffff:0:0:0/96');
const NAT64 = cidr('64:ff9b::/96');
const LOCAL_NAT64 = cidr('64:ff9b:1::/48');
const SIX_TO_FOUR = cidr('2002::/16');
const TEREDO = cidr('2001::/32');

/**
 * The IPv4 addresses an IPv6 address carries, where a packet to it may really go; `wholly`: it is only a way of
 * writing them (mapped, SIIT, NAT64, 6to4, Teredo), judged by them alone.
 */
function embeddedV4(a: ipaddr.IPv6): { wholly: boolean; carried: ipaddr.IPv4[] } {
  const b = a.toByteArray();
  const low = v4Of(b.slice(12, 16));
  const at = (...i: number[]) => v4Of(i.map((k) => b[k]!));
  if (a.match(MAPPED) || a.match(TRANSLATED) || a.match(NAT64)) return { wholly: true, carried: [low] };
  if (a.match(SIX_TO_FOUR)) return { wholly: true, carried: [at(2, 3, 4, 5)] };
  if (a.match(TEREDO)) return { wholly: true, carried: [at(4, 5, 6, 7), v4Of(b.slice(12, 16).map((x) => x ^ 0xff))] };
  if (a.match(LOCAL_NAT64)) return { wholly: false, carried: [at(6, 7, 9, 10), at(7, 9, 10, 11), at(9, 10, 11, 12), low] };
  if (b.slice(0, 12).every((x) => x === 0)) return { wholly: false, carried: [low] };
  if ((b[8] === 0 || b[8] === 2) && b[9] === 0 && b[10] === 0x5e && b[11] === 0xfe) return { wholly: false, carried: [low] };
  return { wholly: false, carried: [] };
}

function rangeOfV4(a: ipaddr.IPv4): string | null {
  if (METADATA_ADDRESSES.has(a.toNormalizedString())) return METADATA;
  const block = V4_BLOCKS.find((k) => a.match(k.range));
  return block && !block.global ? block.label : null;
}

function rangeOfV6(a: ipaddr.IPv6): string | null {
  if (METADATA_ADDRESSES.has(a.toNormalizedString())) return METADATA;
  const block = V6_BLOCKS.find((k) => a.match(k.range));
  // :: and ::1 sit inside the IPv4-compatible block but are themselves.
  if (block?.range[1] === 128) return block.global ? null : block.label;
  const { wholly, carried } = embeddedV4(a);
  const ranges = carried.map(rangeOfV4);
  if (ranges.includes(METADATA)) return METADATA;
  const carriedSpecial = ranges.find((r) => r !== null) ?? null;
  if (wholly) return carriedSpecial;
  if (block && !block.global) return block.label;
  if (carriedSpecial) return carriedSpecial;
  if (block) return null;
  return a.match(GLOBAL_UNICAST) ? null : 'reserved';
}

/** Null for a public address, or for a host name (checked once resolved). */
export function specialRange(address: string): string | null {
  const zone = address.indexOf('%');
  const text = zone >= 0 ? address.slice(0, zone) : address;
  const family = net.isIP(text);
  if (family === 4) return rangeOfV4(ipaddr.IPv4.parse(text));
  // Written in hexadecimal groups first (the URL standard's form): ipaddr.js reads ::a.b.c.d as ::ffff:a.b.c.d.
  if (family === 6) return rangeOfV6(ipaddr.IPv6.parse(new URL(`http://[${text}]/`).hostname.slice(1, -1)));
  return null;
}

export function refusedRange(address: string, policy: DestinationPolicy): string | null {
  const range = specialRange(address);
  if (range === null) return null;
  if (range === METADATA) return range;
  return policy.allowPrivateNetworks ? null : range;
}

const hostOf = (url: string): string => {
  const host = new URL(url).hostname;
  return host.startsWith('[') ? host.slice(1, -1) : host;
};

/** Host names are checked when sending. */
export function refusedLiteral(url: string, policy: DestinationPolicy): string | null {
  const host = hostOf(url);
  if (!net.isIP(host)) return null;
  const range = refusedRange(host, policy);
  return range && `${host} is ${range}`;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** The socket connects to exactly the addresses checked here, so a DNS answer cannot change in between. */
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

/** IP literals are checked here (Node does not look them up), host names in the guarded lookup. */
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
