/** Data only (decision 0155): destination.ts reads them with ipaddr.js. */

/** Only globally reachable blocks are public. */
export type SpecialBlock = [cidr: string, label: string, globallyReachable: boolean];

/**
 * IANA's IPv4 Special-Purpose Address Registry with its "Globally Reachable" column; the more specific entry wins.
 * Multicast is never a unicast destination.
 */
export const IPV4_SPECIAL: SpecialBlock[] = [
  ['0.0.0.0/8', 'unspecified', false],
  ['10.0.0.0/8', 'private', false],
  ['100.64.0.0/10', 'carrier-grade NAT', false],
  ['127.0.0.0/8', 'loopback', false],
  ['169.254.0.0/16', 'link-local', false],
  ['172.16.0.0/12', 'private', false],
  ['192.0.0.0/24', 'IETF protocol assignments', false],
  ['192.0.0.0/29', 'IPv4 service continuity', false],
  ['192.0.0.8/32', 'IPv4 dummy address', false],
  ['192.0.0.9/32', 'port control protocol anycast', true],
  ['192.0.0.10/32', 'TURN anycast', true],
  ['192.0.0.170/32', 'NAT64/DNS64 discovery', false],
  ['192.0.0.171/32', 'NAT64/DNS64 discovery', false],
  ['192.0.2.0/24', 'documentation', false],
  ['192.31.196.0/24', 'AS112', true],
  ['192.52.193.0/24', 'AMT', true],
  ['192.88.99.0/24', 'reserved', false],
  ['192.168.0.0/16', 'private', false],
  ['192.175.48.0/24', 'AS112', true],
  ['198.18.0.0/15', 'benchmarking', false],
  ['198.51.100.0/24', 'documentation', false],
  ['203.0.113.0/24', 'documentation', false],
  ['224.0.0.0/4', 'multicast', false],
  ['240.0.0.0/4', 'reserved', false],
  ['255.255.255.255/32', 'broadcast', false],
];

/**
 * IANA's IPv6 registry, less the entries embedding IPv4 (judged by that address), plus multicast and site-local.
 * Everything outside 2000::/3 is refused as reserved.
 */
export const IPV6_SPECIAL: SpecialBlock[] = [
  ['::/128', 'unspecified', false],
  ['::1/128', 'loopback', false],
  ['64:ff9b:1::/48', 'local-use NAT64', false],
  ['100::/64', 'discard-only', false],
  ['100:0:0:1::/64', 'dummy prefix', false],
  ['2001::/23', 'IETF protocol assignments', false],
  ['2001:1::1/128', 'port control protocol anycast', true],
  ['2001:1::2/128', 'TURN anycast', true],
  ['2001:1::3/128', 'DNS-SD SRP anycast', true],
  ['2001:2::/48', 'benchmarking', false],
  ['2001:3::/32', 'AMT', true],
  ['2001:4:112::/48', 'AS112', true],
  ['2001:10::/28', 'deprecated ORCHID', false],
  ['2001:20::/28', 'ORCHIDv2', true],
  ['2001:30::/28', 'drone remote ID entity tags', true],
  ['2001:db8::/32', 'documentation', false],
  ['2620:4f:8000::/48', 'AS112', true],
  ['3fff::/20', 'documentation', false],
  ['5f00::/16', 'segment routing', false],
  ['fc00::/7', 'private', false],
  ['fe80::/10', 'link-local', false],
  ['fec0::/10', 'private', false],
  ['ff00::/8', 'multicast', false],
];

/** Refused always, also where private networks are allowed. */
export const CLOUD_METADATA: [address: string, providers: string][] = [
  ['169.254.169.254', 'AWS, GCP, Azure, Oracle, DigitalOcean, IBM, Huawei, Hetzner, Linode, Vultr, OpenStack'],
  ['fd00:ec2::254', 'AWS (IPv6)'],
  ['169.254.170.2', 'AWS ECS task credentials'],
  ['169.254.170.23', 'AWS EKS pod identity'],
  ['fd00:ec2::23', 'AWS EKS pod identity (IPv6)'],
  ['fd20:ce::254', 'GCP (IPv6)'],
  ['169.254.169.252', 'GKE metadata server'],
  ['168.63.129.16', 'Azure wire server'],
  ['192.0.0.192', 'Oracle'],
  ['fd00:c1::a9fe:a9fe', 'Oracle (IPv6)'],
  ['100.100.100.200', 'Alibaba'],
  ['169.254.0.23', 'Tencent'],
  ['169.254.42.42', 'Scaleway'],
  ['fd00:42::42', 'Scaleway (IPv6)'],
  ['fd00:a9fe:a9fe::1', 'Linode (IPv6)'],
];
