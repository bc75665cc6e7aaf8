import { createRegistry, HTTP_BUCKETS } from '@svc/platform/metrics';
import { Histogram, type Registry } from 'prom-client';
import { PUBLIC_PREFIX } from './public.js';
import { adminUpstream, EXTERNAL_PREFIX, externalUpstream, resourceOf, type Upstream } from './routes.js';

export interface GatewayMetrics {
  registry: Registry;
  requests: Histogram<'method' | 'route' | 'upstream' | 'status'>;
}

/** Its own series only: the gateway has no outbox. */
export function createGatewayMetrics(): GatewayMetrics {
  const registry = createRegistry('gateway');
  return {
    registry,
    requests: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration, by route template and the service that owns the route',
      labelNames: ['method', 'route', 'upstream', 'status'],
      buckets: HTTP_BUCKETS,
      registers: [registry],
    }),
  };
}

const EXTERNAL_SLASH = `${EXTERNAL_PREFIX}/`;
const ADMIN_PREFIX = '/admin/v1';
/** Bounded whatever the path. */
export const UNMATCHED = 'unmatched';
const GATEWAY_OWN = new Set(['/healthz', '/readyz', '/metrics', `${EXTERNAL_PREFIX}/openapi.json`]);
const COLLECTION = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * An external route's template comes from the service that served it (`x-route-template`, decision 0195), so the
 * gateway keeps no copy of the services' routes; what it answered itself is labelled by resource or `unmatched`.
 */
export function requestLabels(
  method: string,
  path: string,
  status: number,
  served: string | undefined,
  /** The external route's owner, when the gateway already worked it out. */
  routed?: Upstream,
): { route: string; upstream: string } {
  if (GATEWAY_OWN.has(path)) return { route: path, upstream: 'gateway' };
  if (path.startsWith(EXTERNAL_SLASH)) {
    const upstream = routed ?? externalUpstream(path, method);
    if (!upstream) return { route: UNMATCHED, upstream: 'none' };
    // A bare collection is its own template; below it, only the service knows which segment is an id.
    if (served?.startsWith(EXTERNAL_SLASH)) return { route: served, upstream };
    const resource = resourceOf(path);
    const bare = path.length === EXTERNAL_SLASH.length + resource.length;
    return { route: bare ? path : `${EXTERNAL_SLASH}${resource}/*`, upstream };
  }
  if (path.startsWith(`${ADMIN_PREFIX}/`))
    return { route: status === 401 ? `${ADMIN_PREFIX}/*` : adminTemplate(path), upstream: adminUpstream(path) ?? 'none' };
  if (path.startsWith('/public/files/')) return { route: '/public/files/{id}', upstream: 'files' };
  if (path.startsWith(`${PUBLIC_PREFIX}/`)) return { route: `${PUBLIC_PREFIX}/{token}`, upstream: 'crm' };
  if (path.startsWith('/providers/')) return { route: '/providers/*', upstream: 'chat' };
  if (path === '/docs' || path.startsWith('/docs/')) return { route: '/docs/*', upstream: 'gateway' };
  return { route: UNMATCHED, upstream: 'none' };
}

function adminTemplate(path: string): string {
  const segments = path.slice(ADMIN_PREFIX.length + 1).split('/');
  const out: string[] = [];
  for (const [i, segment] of segments.entries()) {
    if (i % 2 === 1) out.push('{id}');
    else if (COLLECTION.test(segment)) out.push(segment);
    else return `${ADMIN_PREFIX}/*`;
  }
  return `${ADMIN_PREFIX}/${out.join('/')}`;
}
