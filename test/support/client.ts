import { checkResponse } from './contract.js';

/**
 * A small HTTP client for tests: JSON in and out, the raw text kept for failure messages. Every answer of the
 * external API is checked against the OpenAPI document (support/contract.ts).
 */
export interface CallResult<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export function client(baseUrl: string) {
  const call = async <T = any>(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
  ): Promise<CallResult<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined || opts.rawBody !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(baseUrl + path, {
      method,
      headers,
      body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
    const text = await res.text();
    checkResponse(method, path, res.status, text, res.headers.get('content-type'), { body: opts.body });
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, body, text, headers: res.headers };
  };
  return { call };
}
