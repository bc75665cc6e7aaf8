import type http from 'node:http';
import proxyaddr from 'proxy-addr';

/** The address of the client a request came from, as the per-address limits and the access log count it. */
export type AddressOf = (req: http.IncomingMessage) => string;

export type ForwardedHeader = 'x-forwarded-for' | 'forwarded';

/** Parses TRUSTED_PROXIES (addresses, CIDRs, or proxy-addr's names such as `uniquelocal`); throws on a bad entry. */
export function trustedProxies(value: string): string[] {
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  proxyaddr.compile(list);
  return list;
}

/**
 * The client's address (decision 0152): the TCP peer's, unless the peer is a trusted proxy; then the forwarded chain
 * is walked from the right, past every trusted proxy, to the first address that is not one. Only the header the
 * proxies write is read; with no trusted proxy (the default) no header is believed, so a client's own
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

/** The `for=` of each element of an RFC 7239 Forwarded header, in order, without quotes, brackets or port. */
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
