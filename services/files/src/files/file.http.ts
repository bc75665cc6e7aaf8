import { forbidden } from '@svc/platform/errors';
import { integrationOf } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { hasPermission } from '@svc/platform/identity';
import { type NextFunction, type Request, type Response, Router } from 'express';
import { listFilesQuery } from './file.schema.js';
import type { FileActor, FileService } from './file.service.js';

/** The file routes' permissions (README, Permissions). */
export const FILE_PERMISSIONS = { read: 'crm/files.read', write: 'crm/files.write' } as const;

function actorFor(req: Request, permission: string): FileActor {
  const identity = integrationOf(req);
  if (!hasPermission(identity, permission)) throw forbidden(`The key lacks the permission ${permission}`);
  return { companyId: identity.companyId, userId: identity.userId };
}

const handle =
  (fn: (req: Request, res: Response) => Promise<void>) =>
  (req: Request, res: Response, next: NextFunction): void => {
    fn(req, res).catch(next);
  };

/**
 * Files of leads and deals. Served by Express rather than the API dispatcher (decision 0014), because an upload's
 * body is a stream the route reads itself: the dispatcher reads every body whole.
 */
export function fileRoutes(files: FileService): Router {
  const r = Router();
  r.post(
    '/files',
    handle(async (req, res) => {
      const actor = actorFor(req, FILE_PERMISSIONS.write);
      res.status(201).json(await files.upload(actor, req));
    }),
  );
  // A file uploaded to a proposal; the proposal's other routes are crm's (decision 0078).
  r.post(
    '/proposals/:id/attachments',
    handle(async (req, res) => {
      const actor = actorFor(req, 'crm/proposals.write');
      res.status(201).json(await files.uploadToProposal(actor, String(req.params.id), req));
    }),
  );
  r.get(
    '/files',
    handle(async (req, res) => {
      const actor = actorFor(req, FILE_PERMISSIONS.read);
      res.json(await files.list(actor, parse(listFilesQuery, req.query)));
    }),
  );
  r.get(
    '/files/:id',
    handle(async (req, res) => {
      const actor = actorFor(req, FILE_PERMISSIONS.read);
      res.json(await files.get(actor, String(req.params.id)));
    }),
  );
  r.delete(
    '/files/:id',
    handle(async (req, res) => {
      const actor = actorFor(req, FILE_PERMISSIONS.write);
      res.json(await files.remove(actor, String(req.params.id)));
    }),
  );
  return r;
}

/** RFC 6266/5987 Content-Disposition: an ASCII fallback and the UTF-8 name. */
const disposition = (name: string) =>
  `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

/** Signed downloads (`/public/files/{id}?expires=&signature=`): no identity, the signature is the credential. */
export function publicFileRoutes(files: FileService): Router {
  const r = Router();
  r.get(
    '/public/files/:id',
    handle(async (req, res) => {
      const q = req.query as Record<string, unknown>;
      const str = (v: unknown) => (typeof v === 'string' ? v : null);
      const file = await files.download(String(req.params.id), str(q.expires), str(q.signature));
      res.writeHead(200, {
        'content-type': file.mimeType,
        'content-length': String(file.size),
        'content-disposition': disposition(file.fileName),
        'x-content-type-options': 'nosniff',
        'cache-control': 'private, no-store',
      });
      file.body.on('error', () => res.destroy());
      file.body.pipe(res);
    }),
  );
  return r;
}
