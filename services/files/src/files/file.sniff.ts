import { Transform, type TransformCallback } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';

/** file-type's own sample size. */
const SAMPLE_BYTES = 4100;

/** Keeps the first bytes so the content type is sniffed, never taken from the client. */
export class SniffingCounter extends Transform {
  bytes = 0;
  private head: Buffer[] = [];
  private headBytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.headBytes < SAMPLE_BYTES) {
      const part = chunk.subarray(0, SAMPLE_BYTES - this.headBytes);
      // A copy: the head must not pin the whole chunk it came from.
      this.head.push(Buffer.from(part));
      this.headBytes += part.length;
    }
    callback(null, chunk);
  }

  contentType(): Promise<string> {
    return sniffContentType(Buffer.concat(this.head));
  }
}

/** A signature file-type recognises; else `text/plain` for valid UTF-8 without binary controls; else octet-stream. */
export async function sniffContentType(sample: Buffer): Promise<string> {
  const found = await fileTypeFromBuffer(sample);
  if (found) return found.mime;
  if (sample.length > 0 && looksLikeText(sample)) return 'text/plain';
  return 'application/octet-stream';
}

function looksLikeText(sample: Buffer): boolean {
  // A sample cut inside a multi-byte character is still text: drop up to 3 trailing bytes of an unfinished one.
  for (let trim = 0; trim <= 3 && trim < sample.length; trim++) {
    const text = decodeUtf8(sample.subarray(0, sample.length - trim));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what tells binary from text
    if (text !== null) return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text);
  }
  return false;
}

const decoder = new TextDecoder('utf-8', { fatal: true });
function decodeUtf8(bytes: Buffer): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}
