import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { CallResult } from './client.js';
import { checkResponse } from './contract.js';

/**
 * A part of a multipart/form-data body: a field, or a file whose bytes are a buffer or produced as they are sent. A
 * value or file name given as a buffer is sent as those bytes (text that is not UTF-8); `filenameStar` adds RFC 5987's
 * `filename*` parameter (`UTF-8''a%00b.png`), which takes precedence over `filename`.
 */
export type Part =
  | { name: string; value: string | Buffer }
  | {
      name: string;
      filename: string | Buffer;
      filenameStar?: string;
      contentType?: string;
      data: Buffer | (() => AsyncIterable<Buffer>);
    };

/** The parts in the order given (so a test can send a field after the file), streamed as they are produced. */
export async function* multipart(boundary: string, parts: Part[]): AsyncIterable<Buffer> {
  for (const part of parts) {
    if ('value' in part) {
      yield Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${part.name}"\r\n\r\n`);
      yield Buffer.from(part.value);
      yield Buffer.from('\r\n');
      continue;
    }
    yield Buffer.concat([
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${part.name}"; filename="`),
      Buffer.from(part.filename),
      Buffer.from(
        `"${part.filenameStar ? `; filename*=${part.filenameStar}` : ''}\r\n` +
          `content-type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
    ]);
    if (Buffer.isBuffer(part.data)) yield part.data;
    else for await (const chunk of part.data()) yield chunk;
    yield Buffer.from('\r\n');
  }
  yield Buffer.from(`--${boundary}--\r\n`);
}

/** `size` bytes of a pattern, produced 64 KiB at a time (never whole in memory). */
export function generated(size: number, chunk = 64 * 1024): () => AsyncIterable<Buffer> {
  return async function* () {
    const block = Buffer.alloc(chunk, 'abcdefghij0123456789');
    for (let sent = 0; sent < size; sent += chunk) yield size - sent >= chunk ? block : block.subarray(0, size - sent);
  };
}

/** POST of a multipart body, streamed, with the integration key `token` (none: no authorization header). */
export async function postMultipart(url: string, token: string | undefined, parts: Part[]): Promise<CallResult> {
  const boundary = `----svc${randomBytes(8).toString('hex')}`;
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: Readable.toWeb(Readable.from(multipart(boundary, parts))) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  const form = Object.fromEntries(
    parts.map((part) => [part.name, 'value' in part ? part.value.toString() : part.filename.toString()] as const),
  );
  const where = new URL(url);
  checkResponse('POST', where.pathname + where.search, res.status, text, res.headers.get('content-type'), { form });
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, headers: res.headers };
}

/** The first bytes of a real PNG (signature and IHDR of a 1×1 image): enough for content sniffing. */
export const PNG_BYTES = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082',
  'hex',
);
/** A minimal PDF header. */
export const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n');
