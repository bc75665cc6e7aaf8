import type http from 'node:http';
import proxyaddr from 'proxy-addr';

export type AddressOf = (req: http.IncomingMessage) => string;

export type ForwardedHeader = 'x-forwarded-for' | 'forwarded';

/** Throws on a bad entry. */
export function trustedProxies(value: string): string[] {
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  proxyaddr.compile(list);
  return list;
}

/**
 * The forwarded chain is believed only past trusted proxies (decision 0152): with none, a client's own
 * X-Forwarded-For changes nothing.
 */
export function clientAddressOf(trusted: string[], header: ForwardedHeader): AddressOf {
  const peer = (req: http.IncomingMessage) => req.socket.remoteAddress ?? 'unknown';
  if (trusted.length === 0) return peer;
  const trust = proxyaddr.compile(trusted);
  if (header === 'x-forwarded-for') return (req) => proxyaddr(req, trust);
  return (req) => {
    const chain = [peer(req), ...forwardedFor(req.headers.forwarded).reverse()];
    for (let i = 0; i < chain.length - 1; i++) {
      const address = chain[i] as string;
      if (!trust(address, i)) return address;
    }
    return chain[chain.length - 1] as string;
  };
}

/** RFC 7239 `for=` values, without quotes, brackets or port. */
function forwardedFor(value: string | undefined): string[] {
  if (!value) return [];
  const out: string[] = [];
  for (const element of value.split(',')) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq === -1 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      let node = pair
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (node.startsWith('[')) node = node.slice(1, node.indexOf(']') === -1 ? undefined : node.indexOf(']'));
      else if (node.split(':').length === 2) node = node.slice(0, node.indexOf(':'));
      out.push(node);
    }
  }
  return out;
}
