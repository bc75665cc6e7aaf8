import type http from 'node:http';
import { invalidField } from '@svc/platform/errors';
import { hasBody, readBody } from '@svc/platform/http/body';

export const BATCH_BODY = Symbol('batchBody');
export const BATCH_ERROR = Symbol('batchBodyError');

/** A batch's body, read before the rate limit, and forwarded as read; or why it could not be read. */
export type BatchRequest = http.IncomingMessage & { [BATCH_BODY]?: string; [BATCH_ERROR]?: unknown };

/** Batch routes: the rate limit counts their items (decision 0181). */
const BATCH_PATH = /^\/integrations\/external\/(?:leads|deals)\/batch(?:\?|$)/;
/** createApiDispatcher's default, so the gateway refuses what the services would. */
const BATCH_BODY_LIMIT = '1mb';

/** A batch costs one point per item, so its body is read, with the services' own rules, before the limit is asked. */
export function pointsOf(
  req: BatchRequest,
  res: http.ServerResponse,
  watchBody: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): number | Promise<number> {
  if (req.method !== 'POST' || !BATCH_PATH.test(req.url ?? '')) return 1;
  if (hasBody(req)) watchBody(req, res);
  return readBody(req, { limit: BATCH_BODY_LIMIT }).then(
    (body) => {
      if (body === undefined) return 1;
      try {
        req[BATCH_BODY] = JSON.stringify(body);
      } catch {
        req[BATCH_ERROR] = invalidField('body', 'nested too deeply');
        return 1;
      }
      const items = (body as { items?: unknown }).items;
      return Array.isArray(items) && items.length >= 1 && items.length <= 100 ? items.length : 1;
    },
    (err: unknown) => {
      req[BATCH_ERROR] = err;
      return 1;
    },
  );
}
