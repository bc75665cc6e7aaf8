import { status } from '@grpc/grpc-js';
import { expect } from 'chai';
import { AppError, type ErrorKind, errorBody, fromGrpcStatus, grpcStatusOf, isUuid, requireUuid } from '../src/errors.js';

describe('the closed error set', () => {
  const kinds: [ErrorKind, number, string][] = [
    ['invalid', 400, 'Bad Request'],
    ['unauthorized', 401, 'Unauthorized'],
    ['forbidden', 403, 'Forbidden'],
    ['not_found', 404, 'Not Found'],
    ['conflict', 409, 'Conflict'],
    ['gone', 410, 'Gone'],
    ['rate_limited', 429, 'Too Many Requests'],
    ['unavailable', 503, 'Service Unavailable'],
    ['internal', 500, 'Internal Server Error'],
  ];
  for (const [kind, code, error] of kinds) {
    it(`maps ${kind} to HTTP ${code} with the spec body, and back through gRPC unchanged`, () => {
      expect(errorBody(kind, 'm')).to.deep.equal({ statusCode: code, message: 'm', error });
      const back = fromGrpcStatus(grpcStatusOf(kind), 'm');
      expect(back.kind).to.equal(kind);
      expect(back).to.be.instanceOf(AppError);
    });
  }
  for (const [kind, code, error] of [
    ['unsupported_media_type', 415, 'Unsupported Media Type'],
    ['request_timeout', 408, 'Request Timeout'],
    ['headers_too_large', 431, 'Request Header Fields Too Large'],
  ] as [ErrorKind, number, string][]) {
    it(`maps the HTTP-only ${kind} to ${code}, and never reads a peer's gRPC code back as it`, () => {
      expect(errorBody(kind, 'm')).to.deep.equal({ statusCode: code, message: 'm', error });
      expect(fromGrpcStatus(grpcStatusOf(kind), 'm').kind).to.not.equal(kind);
    });
  }
  it('answers a fixed message for a transport failure and keeps its detail (an address) for the log only', () => {
    const detail = 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:9081';
    for (const code of [status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.UNKNOWN, status.CANCELLED]) {
      const e = fromGrpcStatus(code, detail);
      expect(e.kind).to.equal('unavailable');
      expect(e.message).to.equal('A service this request needs is unavailable');
      expect(e.details).to.deep.equal({ cause: detail });
    }
    expect(fromGrpcStatus(status.NOT_FOUND, 'Lead not found').message).to.equal('Lead not found');
  });
  it('turns a peer deadline into unavailable', () => {
    expect(fromGrpcStatus(status.DEADLINE_EXCEEDED, 'slow').kind).to.equal('unavailable');
  });
  it('treats an id that is not a UUID as not found', () => {
    expect(isUuid('0190a3c2-6a4f-7b1e-8a3b-0123456789ab')).to.equal(true);
    expect(() => requireUuid('42', 'Lead')).to.throw(AppError, 'Lead not found');
  });
});
