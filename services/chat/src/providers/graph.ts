import type { Readable } from 'node:stream';
import { Agent, type Dispatcher, request, errors as undiciErrors } from 'undici';
import { FileSourceError } from './multipart.js';
import { ProviderError } from './provider.js';

/** One Graph client: a Graph error object is `rejected` with its code, no Graph answer is `unreachable`. */
export interface GraphClientOptions {
  /** Base URL including the version segment, e.g. https://graph.facebook.com/v23.0. */
  baseUrl: string;
  accessToken: string;
  timeoutMs: number;
  dispatcher?: Dispatcher;
}

export interface GraphCall {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  /** A streamed body (multipart upload); sent as it is read. */
  body?: Readable;
  headers?: Record<string, string>;
}

interface GraphErrorBody {
  error?: {
    message?: string;
    type?: string;
    code?: number;
    error_subcode?: number;
    fbtrace_id?: string;
    error_data?: { details?: string };
  };
}

const sharedAgents = new Map<number, Agent>();
function agentFor(timeoutMs: number): Agent {
  let agent = sharedAgents.get(timeoutMs);
  if (!agent) {
    agent = new Agent({
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connectTimeout: Math.min(timeoutMs, 10_000),
      keepAliveTimeout: 30_000,
    });
    sharedAgents.set(timeoutMs, agent);
  }
  return agent;
}

export class GraphClient {
  private readonly base: string;
  private readonly dispatcher: Dispatcher;

  constructor(private readonly options: GraphClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.dispatcher = options.dispatcher ?? agentFor(options.timeoutMs);
  }

  url(path: string, query?: GraphCall['query']): string {
    const url = new URL(`${this.base}${path}`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  async call<T>(call: GraphCall): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.accessToken}`, ...call.headers };
    let body: string | Readable | undefined = call.body;
    if (call.json !== undefined) {
      body = JSON.stringify(call.json);
      headers['content-type'] = 'application/json';
    }
    const res = await this.send(this.url(call.path, call.query), { method: call.method, headers, body }, call.method !== 'GET');
    const text = await res.body.text().catch((err: Error) => {
      throw new ProviderError('unreachable', `reading the Graph answer failed: ${err.message}`, {
        httpStatus: res.statusCode,
        outcomeUnknown: true,
      });
    });
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      throw new ProviderError('unreachable', `Graph answered ${res.statusCode} with a body that is not JSON`, {
        httpStatus: res.statusCode,
        outcomeUnknown: res.statusCode >= 500,
      });
    }
    if (res.statusCode >= 200 && res.statusCode < 300) return parsed as T;
    throw graphError(res.statusCode, parsed as GraphErrorBody);
  }

  /** GETs an absolute URL (a media download), with the token only when asked: CDN URLs must not receive it. */
  async download(url: string, withToken: boolean): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = withToken ? { authorization: `Bearer ${this.options.accessToken}` } : {};
    const res = await this.send(url, { method: 'GET', headers }, false);
    if (res.statusCode >= 200 && res.statusCode < 300) return res;
    const text = await res.body.text().catch(() => '');
    let parsed: GraphErrorBody = {};
    try {
      parsed = JSON.parse(text) as GraphErrorBody;
    } catch {
      // A CDN answers errors in HTML or plain text: the status alone tells what happened.
    }
    throw graphError(res.statusCode, parsed);
  }

  private async send(
    url: string,
    init: { method: GraphCall['method']; headers: Record<string, string>; body?: string | Readable },
    mutates: boolean,
  ): Promise<Dispatcher.ResponseData> {
    try {
      return await request(url, { ...init, dispatcher: this.dispatcher });
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      // The file being uploaded failed on its side: the caller's error, not Graph's, and nothing was sent.
      if (err instanceof FileSourceError) throw err.source;
      // A refused or failed connection never reached Graph; a timeout or reset after sending might have acted.
      const beforeSending =
        err instanceof undiciErrors.ConnectTimeoutError ||
        (err instanceof Error && 'code' in err && (err.code === 'ECONNREFUSED' || err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN'));
      throw new ProviderError('unreachable', `Graph request failed: ${(err as Error).message}`, {
        outcomeUnknown: mutates && !beforeSending,
      });
    }
  }
}

/** Graph codes of an invalid token (190) and of rate limits (app, user, account, throughput, pair). */
const OUR_SIDE = new Set([190, 4, 17, 613, 80007, 130429, 131056]);

function graphError(status: number, body: GraphErrorBody): ProviderError {
  const e = body.error;
  const message = [e?.message ?? `Graph answered ${status}`, e?.error_data?.details].filter(Boolean).join(': ');
  const detail = { code: e?.code, subcode: e?.error_subcode, httpStatus: status, traceId: e?.fbtrace_id };
  // Graph's 5xx (and its "temporarily unavailable" codes 1 and 2) are its own failures: the call may have acted.
  if (status >= 500 || e?.code === 1 || e?.code === 2) {
    return new ProviderError('unreachable', message, { ...detail, outcomeUnknown: true });
  }
  // A refused token or a throttled app is this deployment's problem with Meta, not the caller's request.
  if (status === 401 || (e?.code !== undefined && OUR_SIDE.has(e.code))) return new ProviderError('unreachable', message, detail);
  return new ProviderError('rejected', message, detail);
}
