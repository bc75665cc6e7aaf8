import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { instagramMessageBody, whatsappMessageBody } from './graph-schemas.js';

/**
 * A fake of Meta's Graph API on loopback, for tests of the real WhatsApp Cloud and Instagram clients. It checks
 * every request it receives (version segment, bearer token, path, JSON body against Graph's shapes, multipart
 * parts) and answers as Graph does; a request it would refuse is answered with Graph's error body and kept in
 * `violations`, which a test asserts empty. Uploads are hashed as they stream in, never held.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  json?: unknown;
  upload?: { fields: Record<string, string>; fileField: string; fileName: string; mimeType: string; bytes: number; sha256: string };
}

export interface FakeGraphOptions {
  version?: string;
  token?: string;
  phoneNumberIds?: string[];
  businessAccountId?: string;
  instagramAccountId?: string;
}

interface GraphFailure {
  status: number;
  error?: { message: string; type?: string; code: number; error_subcode?: number; fbtrace_id?: string };
  /** Accept the request and never answer (a timeout). */
  hang?: boolean;
}

export class FakeGraph {
  readonly version: string;
  readonly token: string;
  readonly phoneNumberIds: string[];
  readonly businessAccountId: string;
  readonly instagramAccountId: string;
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  readonly templates: Record<string, unknown>[] = [];
  private readonly media = new Map<string, { bytes: Buffer; mimeType: string }>();
  private readonly cdn = new Map<string, { bytes: Buffer; mimeType: string }>();
  private readonly failures: GraphFailure[] = [];
  private readonly hanging = new Set<ServerResponse>();
  private server?: Server;
  baseUrl = '';
  origin = '';

  constructor(options: FakeGraphOptions = {}) {
    this.version = options.version ?? 'v23.0';
    this.token = options.token ?? `EAAG${randomUUID().replaceAll('-', '')}`;
    this.phoneNumberIds = options.phoneNumberIds ?? ['106540352242922'];
    this.businessAccountId = options.businessAccountId ?? '102290129340398';
    this.instagramAccountId = options.instagramAccountId ?? '17841405822304914';
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.origin = `http://127.0.0.1:${port}`;
    this.baseUrl = `${this.origin}/${this.version}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The next request is answered with this failure instead (Graph's error body). */
  failNext(failure: GraphFailure): void {
    this.failures.push(failure);
  }

  addMedia(id: string, bytes: Buffer, mimeType: string): void {
    this.media.set(id, { bytes, mimeType });
  }

  /** A file on the fake CDN (Instagram attachment URLs); returns its URL. */
  addCdnFile(name: string, bytes: Buffer, mimeType: string): string {
    this.cdn.set(name, { bytes, mimeType });
    return `${this.origin}/cdn/${name}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
    };
    this.requests.push(recorded);
    try {
      if (url.pathname.startsWith('/cdn/')) return this.serveCdn(req, res, url.pathname.slice(5));
      const failure = this.failures.shift();
      if (failure?.hang) {
        this.hanging.add(res);
        req.resume();
        return;
      }
      if (failure) {
        req.resume();
        return json(res, failure.status, failure.error ? { error: failure.error } : { error: { message: 'failure', code: 1 } });
      }
      const prefix = `/${this.version}/`;
      if (!url.pathname.startsWith(prefix))
        return this.refuse(res, recorded, 400, `path ${url.pathname} lacks the version ${this.version}`);
      if (req.headers.authorization !== `Bearer ${this.token}`) {
        return this.refuse(res, recorded, 401, 'missing or wrong bearer token', 190);
      }
      const segments = url.pathname.slice(prefix.length).split('/');
      await this.route(req, res, recorded, segments);
    } catch (err) {
      this.refuse(res, recorded, 400, `unreadable request: ${(err as Error).message}`);
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, segments: string[]): Promise<void> {
    const [first, second] = segments;
    const where = `${rec.method} /${segments.join('/')}`;
    if (rec.method === 'POST' && second === 'messages' && segments.length === 2) {
      rec.json = await readJson(req);
      if (this.phoneNumberIds.includes(first ?? '')) return this.whatsappMessage(res, rec);
      if (first === this.instagramAccountId) return this.instagramMessage(res, rec);
      return this.refuse(res, rec, 400, `${where}: unknown sender ${first}`, 100, 33);
    }
    if (rec.method === 'POST' && second === 'media' && segments.length === 2 && this.phoneNumberIds.includes(first ?? '')) {
      return this.upload(req, res, rec);
    }
    if (rec.method === 'GET' && first === this.businessAccountId && second === 'message_templates') {
      req.resume();
      return this.listTemplates(res, rec);
    }
    if (rec.method === 'GET' && first === 'media-download' && second) {
      req.resume();
      const media = this.media.get(second);
      if (!media) return this.refuse(res, rec, 404, `no media ${second}`, 100);
      res.writeHead(200, { 'content-type': media.mimeType, 'content-length': media.bytes.length }).end(media.bytes);
      return;
    }
    if (rec.method === 'GET' && first && segments.length === 1) {
      req.resume();
      const media = this.media.get(first);
      if (!media) return this.refuse(res, rec, 400, `Unsupported get request. Object with ID '${first}' does not exist`, 100, 33);
      if (rec.query.phone_number_id !== undefined && !this.phoneNumberIds.includes(rec.query.phone_number_id)) {
        return this.refuse(res, rec, 400, `media ${first} does not belong to ${rec.query.phone_number_id}`, 100);
      }
      return json(res, 200, {
        messaging_product: 'whatsapp',
        url: `${this.baseUrl}/media-download/${first}`,
        mime_type: media.mimeType,
        sha256: createHash('sha256').update(media.bytes).digest('hex'),
        file_size: media.bytes.length,
        id: first,
      });
    }
    req.resume();
    this.refuse(res, rec, 400, `${where}: no such Graph endpoint`, 100);
  }

  private whatsappMessage(res: ServerResponse, rec: RecordedRequest): void {
    const parsed = whatsappMessageBody.safeParse(rec.json);
    if (!parsed.success) {
      this.refuse(res, rec, 400, `(#100) Invalid parameter: ${parsed.error.issues.map(issueText).join('; ')}`, 100);
      return;
    }
    const body = parsed.data;
    if ('status' in body) {
      json(res, 200, { success: true });
      return;
    }
    json(res, 200, {
      messaging_product: 'whatsapp',
      contacts: [{ input: body.to, wa_id: body.to.replace(/^\+/, '') }],
      messages: [{ id: `wamid.${Buffer.from(randomUUID()).toString('base64')}` }],
    });
  }

  private instagramMessage(res: ServerResponse, rec: RecordedRequest): void {
    const parsed = instagramMessageBody.safeParse(rec.json);
    if (!parsed.success) {
      this.refuse(res, rec, 400, `(#100) Invalid parameter: ${parsed.error.issues.map(issueText).join('; ')}`, 100);
      return;
    }
    const body = parsed.data;
    if ('sender_action' in body) {
      json(res, 200, { recipient_id: body.recipient.id });
      return;
    }
    json(res, 200, {
      recipient_id: body.recipient.id,
      message_id: `aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlE${randomUUID().replaceAll('-', '')}`,
    });
  }

  private upload(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): Promise<void> {
    return new Promise((resolve) => {
      const contentType = req.headers['content-type'] ?? '';
      if (!contentType.startsWith('multipart/form-data')) {
        req.resume();
        this.refuse(res, rec, 400, 'media upload must be multipart/form-data', 100);
        return resolve();
      }
      const fields: Record<string, string> = {};
      const files: NonNullable<RecordedRequest['upload']>[] = [];
      let failed: string | undefined;
      const parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: 200 * 1024 * 1024 } });
      parser.on('field', (name, value) => {
        fields[name] = value;
      });
      parser.on('file', (name, stream, info) => {
        const hash = createHash('sha256');
        let bytes = 0;
        stream.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          hash.update(chunk);
        });
        stream.on('end', () =>
          files.push({ fields, fileField: name, fileName: info.filename, mimeType: info.mimeType, bytes, sha256: hash.digest('hex') }),
        );
      });
      parser.on('error', (err: Error) => {
        failed = err.message;
      });
      parser.on('close', () => {
        const file = files[0];
        rec.upload = file;
        const problem =
          failed ??
          (fields.messaging_product !== 'whatsapp'
            ? 'messaging_product must be whatsapp'
            : file?.fileField !== 'file'
              ? 'the part "file" is missing'
              : fields.type !== file.mimeType
                ? `type ${fields.type} differs from the file's ${file.mimeType}`
                : undefined);
        if (problem || !file) this.refuse(res, rec, 400, `(#100) ${problem}`, 100);
        else json(res, 200, { id: String(Date.now() * 1000 + this.requests.length) });
        resolve();
      });
      req.on('aborted', () => {
        failed = 'upload aborted';
      });
      req.pipe(parser);
    });
  }

  private listTemplates(res: ServerResponse, rec: RecordedRequest): void {
    const category = rec.query.category;
    const limit = Number(rec.query.limit ?? 25);
    const all = this.templates.filter((t) => !category || t.category === category);
    let start = 0;
    if (rec.query.after) start = Number(Buffer.from(rec.query.after, 'base64').toString()) + 1;
    if (rec.query.before) start = Math.max(0, Number(Buffer.from(rec.query.before, 'base64').toString()) - limit);
    const page = all.slice(start, start + limit);
    const cursor = (n: number) => Buffer.from(String(n)).toString('base64');
    json(res, 200, {
      data: page,
      paging: page.length ? { cursors: { before: cursor(start), after: cursor(start + page.length - 1) } } : { cursors: {} },
    });
  }

  private serveCdn(req: IncomingMessage, res: ServerResponse, name: string): void {
    req.resume();
    const rec = this.requests[this.requests.length - 1] as RecordedRequest;
    if (req.headers.authorization) {
      this.refuse(res, rec, 400, 'a CDN URL was sent the access token');
      return;
    }
    const file = this.cdn.get(name);
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    res.writeHead(200, { 'content-type': file.mimeType, 'content-length': file.bytes.length }).end(file.bytes);
  }

  private refuse(res: ServerResponse, rec: RecordedRequest, status: number, message: string, code = 100, subcode?: number): void {
    this.violations.push(`${rec.method} ${rec.path}: ${message}`);
    json(res, status, { error: { message, type: 'OAuthException', code, error_subcode: subcode, fbtrace_id: 'AbCdEf123' } });
  }
}

const issueText = (i: { path: PropertyKey[]; message: string }) => `${i.path.map(String).join('.')}: ${i.message}`;

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) throw new Error('content-type is not application/json');
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}
