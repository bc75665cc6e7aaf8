import http from 'node:http';

type Given = http.OutgoingHttpHeaders | http.OutgoingHttpHeader[] | undefined;

/**
 * The gateway's own answer headers on the external path (request id, `RateLimit-*`, CORS) are held back and written
 * by the answer's one `writeHead`, together with the service's headers (decision 0255). With no header set before
 * it, `writeHead` takes Node's fast path: each header validated once as it is written, instead of a `setHeader` per
 * header (a lower-cased copy of its name and a store) and a second walk over the stored ones.
 *
 * Any other use of the header API first sets the held headers, in their order, so every other answer (401, 429, 503,
 * 408, the preflight) and every reader sees them exactly as when they were set at once.
 */
export class GatewayResponse<Request extends http.IncomingMessage = http.IncomingMessage> extends http.ServerResponse<Request> {
  /** Name, value, name, value... */
  private held: string[] | undefined = undefined;
  /** The held names, lower-cased: a service's header of the same name takes its place, as `setHeader` did. */
  private heldLower: string[] | undefined = undefined;

  /** From now on, `ownHeader` holds its headers back until the answer's `writeHead`. */
  holdOwnHeaders(): void {
    this.held ??= [];
    this.heldLower ??= [];
  }

  hold(name: string, value: string): void {
    if (this.held === undefined || this.heldLower === undefined) {
      this.setHeader(name, value);
      return;
    }
    this.held.push(name, value);
    this.heldLower.push(name.toLowerCase());
  }

  /** Sets what was held, as `setHeader` calls in the order they were made. */
  private release(): void {
    const held = this.held;
    if (held === undefined) return;
    this.held = undefined;
    this.heldLower = undefined;
    for (let i = 0; i < held.length; i += 2) super.setHeader(held[i] as string, held[i + 1] as string);
  }

  override writeHead(statusCode: number, reason?: string | Given, given?: Given): this {
    const held = this.held;
    const heldLower = this.heldLower;
    const headers = typeof reason === 'string' ? given : reason;
    // An array may name a header twice on purpose: Node's own merge keeps that.
    if (held === undefined || heldLower === undefined || Array.isArray(headers)) {
      this.release();
      return typeof reason === 'string' ? super.writeHead(statusCode, reason, given) : super.writeHead(statusCode, headers);
    }
    this.held = undefined;
    this.heldLower = undefined;
    const all: http.OutgoingHttpHeader[] = held.slice();
    if (headers)
      for (const name in headers) {
        const value = headers[name] as http.OutgoingHttpHeader;
        const at = heldAt(heldLower, name);
        if (at === -1) all.push(name, value);
        else {
          all[2 * at] = name;
          all[2 * at + 1] = value;
        }
      }
    try {
      return typeof reason === 'string' ? super.writeHead(statusCode, reason, all) : super.writeHead(statusCode, all);
    } catch (err) {
      // An invalid header: nothing was written, and the answer that follows (an error) still carries the held ones.
      this.held = held;
      this.heldLower = heldLower;
      throw err;
    }
  }

  override setHeader(name: string, value: number | string | readonly string[]): this {
    this.release();
    return super.setHeader(name, value);
  }

  override appendHeader(name: string, value: string | readonly string[]): this {
    this.release();
    return super.appendHeader(name, value);
  }

  override getHeader(name: string): number | string | string[] | undefined {
    this.release();
    return super.getHeader(name);
  }

  override getHeaders(): http.OutgoingHttpHeaders {
    this.release();
    return super.getHeaders();
  }

  override getHeaderNames(): string[] {
    this.release();
    return super.getHeaderNames();
  }

  /** Not in @types/node's ServerResponse, but Node's. */
  getRawHeaderNames(): string[] {
    this.release();
    return (
      http.OutgoingMessage.prototype as unknown as { getRawHeaderNames(this: http.OutgoingMessage): string[] }
    ).getRawHeaderNames.call(this);
  }

  override hasHeader(name: string): boolean {
    this.release();
    return super.hasHeader(name);
  }

  override removeHeader(name: string): void {
    this.release();
    super.removeHeader(name);
  }

  override flushHeaders(): void {
    this.release();
    super.flushHeaders();
  }
}

function heldAt(heldLower: string[], name: string): number {
  for (let i = 0; i < heldLower.length; i++) {
    const own = heldLower[i] as string;
    if (own.length === name.length && (own === name || own === name.toLowerCase())) return i;
  }
  return -1;
}

/** One of the gateway's own answer headers: held back on a `GatewayResponse` that holds them, else set at once. */
export function ownHeader(res: http.ServerResponse, name: string, value: string): void {
  if (res instanceof GatewayResponse) res.hold(name, value);
  else res.setHeader(name, value);
}
