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
  it('turns a peer deadline into unavailable', () => {
    expect(fromGrpcStatus(status.DEADLINE_EXCEEDED, 'slow').kind).to.equal('unavailable');
  });
  it('treats an id that is not a UUID as not found', () => {
    expect(isUuid('0190a3c2-6a4f-7b1e-8a3b-0123456789ab')).to.equal(true);
    expect(() => requireUuid('42', 'Lead')).to.throw(AppError, 'Lead not found');
  });
});
