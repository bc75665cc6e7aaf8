import { createRegistry, HTTP_BUCKETS } from '@svc/platform/metrics';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { Histogram, type Registry } from 'prom-client';
import { PUBLIC_PREFIX } from './public.js';
import { adminUpstream, externalUpstream } from './routes.js';

export interface GatewayMetrics {
  registry: Registry;
  /** Requests by method, route template, the service that owns the route (`gateway` for its own) and status. */
  requests: Histogram<'method' | 'route' | 'upstream' | 'status'>;
}

/** The gateway's registry: its own series only (no outbox, which it does not have). */
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

const EXTERNAL_PREFIX = '/integrations/external';
const ADMIN_PREFIX = '/admin/v1';
/** What a request the gateway cannot place is labelled: a label set an unknown path cannot grow. */
export const UNMATCHED = 'unmatched';
const GATEWAY_OWN = new Set(['/healthz', '/readyz', '/metrics', `${EXTERNAL_PREFIX}/openapi.json`]);
const COLLECTION = /^[a-z][a-z0-9-]{0,39}$/;
const OPERATIONS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/**
 * Route templates of the requests the gateway serves, for metric labels: the external API's as the services'
 * OpenAPI documents state them (`/integrations/external/leads/{ref}`), learned as the gateway assembles the merged
 * document, so a route a service adds needs no gateway change (decision 0195). Until a service's document has been
 * read, its routes are labelled by resource (`/integrations/external/leads/*`). The admin API, which has no document
 * here, is labelled by collection, its ids replaced.
 */
export class RouteTemplates {
  private readonly byService = new Map<string, Record<string, string[]>>();
  private router = FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true });

  /**
   * A service's documented routes, path (OpenAPI `{param}` syntax) → methods; replaces what it said before. Matched
   * by the router the services route with, so a literal segment wins over a parameter as it does there.
   */
  learn(service: string, routes: Record<string, string[]>): void {
    this.byService.set(service, routes);
    const router = FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true });
    for (const paths of this.byService.values())
      for (const [template, methods] of Object.entries(paths)) {
        const pattern = template.replace(/\{([^}/]+)\}/g, ':$1');
        for (const method of methods) {
          // A path item also holds `parameters`, `summary`, ...: only its operations are routes.
          if (!OPERATIONS.has(method)) continue;
          const m = method.toUpperCase() as HTTPMethod;
          // Two services documenting one route: the first keeps it, as the merged document does.
          if (!router.hasRoute(m, pattern)) router.on(m, pattern, () => undefined, { template });
        }
      }
    this.router = router;
  }

  /** The route template and owning service of a request path (without its query string). */
  label(method: string, path: string, status: number): { route: string; upstream: string } {
    if (GATEWAY_OWN.has(path)) return { route: path, upstream: 'gateway' };
    if (path.startsWith(`${EXTERNAL_PREFIX}/`)) {
      const upstream = externalUpstream(path, method);
      if (!upstream) return { route: UNMATCHED, upstream: 'none' };
      const route = (this.router.find(method as HTTPMethod, path)?.store as { template: string } | undefined)?.template;
      return { route: route ?? `${EXTERNAL_PREFIX}/${path.split('/')[3]}/*`, upstream };
    }
    if (path.startsWith(`${ADMIN_PREFIX}/`))
      return { route: status === 401 ? `${ADMIN_PREFIX}/*` : adminTemplate(path), upstream: adminUpstream(path) ?? 'none' };
    if (path.startsWith('/public/files/')) return { route: '/public/files/{id}', upstream: 'files' };
    if (path.startsWith(`${PUBLIC_PREFIX}/`)) return { route: `${PUBLIC_PREFIX}/{token}`, upstream: 'crm' };
    if (path.startsWith('/providers/')) return { route: '/providers/*', upstream: 'chat' };
    if (path === '/docs' || path.startsWith('/docs/')) return { route: '/docs/*', upstream: 'gateway' };
    return { route: UNMATCHED, upstream: 'none' };
  }
}

/** `/admin/v1/companies/{id}/webhooks/{id}/deliveries`: collections and ids alternate after the prefix. */
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
