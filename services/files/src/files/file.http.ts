import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody } from '@svc/platform/errors';
import { type ApiRequest, type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { deleteFile, getFile, listFiles, uploadFile, uploadProposalAttachment } from './file.contract.js';
import type { FileActor, FileService } from './file.service.js';

const actorOf = (req: ApiRequest): FileActor => {
  const identity = integrationOf(req);
  return { companyId: identity.companyId, userId: identity.userId };
};

/** Uploads are `stream` routes: the service parses the multipart body as it arrives (decisions 0075, 0079). */
export function fileRoutes(files: FileService): ApiRouter {
  return apiRouter()
    .stream(uploadFile, async (req, res) => {
      res.status(201).json(await files.upload(actorOf(req), req.raw));
    })
    .route(listFiles, async (req, res, { query }) => {
      res.json(await files.list(actorOf(req), query));
    })
    .route(getFile, async (req, res, { params }) => {
      res.json(await files.get(actorOf(req), params.id));
    })
    .route(deleteFile, async (req, res, { params }) => {
      res.json(await files.remove(actorOf(req), params.id));
    })
    .stream(uploadProposalAttachment, async (req, res, { params }) => {
      res.status(201).json(await files.uploadToProposal(actorOf(req), params.id, req.raw));
    });
}

/** RFC 6266/5987 Content-Disposition: an ASCII fallback and the UTF-8 name. */
const disposition = (name: string) =>
  `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

const DOWNLOAD = /^\/public\/files\/([^/?]+)(?:\?(.*))?$/;

/** Served before any identity check: the signature is the credential (decision 0077). */
export function publicFileRoute(files: FileService): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const match = req.method === 'GET' ? DOWNLOAD.exec(req.url ?? '') : null;
    if (!match) return false;
    const query = new URLSearchParams(match[2] ?? '');
    files.download(decodeURIComponent(match[1]!), query.get('expires'), query.get('signature')).then(
      (file) => {
        res.writeHead(200, {
          'content-type': file.mimeType,
          'content-length': String(file.size),
          'content-disposition': disposition(file.fileName),
          'x-content-type-options': 'nosniff',
          'cache-control': 'private, no-store',
        });
        file.body.on('error', () => res.destroy());
        file.body.pipe(res);
      },
      () => {
        // Every refusal looks the same (a forged, expired or foreign signature, a removed file).
        const body = errorBody('not_found', 'File not found');
        res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
      },
    );
    return true;
  };
}
