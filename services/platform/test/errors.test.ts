import { Metadata, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { expect } from 'chai';
import { z } from 'zod';
import {
  AppError,
  ERROR_FIELDS_METADATA,
  type ErrorKind,
  errorBody,
  errorBodyOf,
  fromGrpcStatus,
  grpcStatusOf,
  invalidField,
  invalidFields,
  isUuid,
  parseErrorFields,
  requireUuid,
} from '../src/errors.js';
import { unary } from '../src/grpc/server.js';
import { zodToInvalid } from '../src/http/errors.js';
import { createLogger } from '../src/logging.js';

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
  describe('the field list of a validation error (decision 0141)', () => {
    it('answers the three fields and details.fields, each named in message as `field: message`', () => {
      const e = invalidFields([
        { field: 'title', message: 'must be 1 to 150 characters' },
        { field: 'tags.0', message: 'must be a UUID' },
      ]);
      expect(errorBodyOf(e)).to.deep.equal({
        statusCode: 400,
        message: 'title: must be 1 to 150 characters; tags.0: must be a UUID',
        error: 'Bad Request',
        details: {
          fields: [
            { field: 'title', message: 'must be 1 to 150 characters' },
            { field: 'tags.0', message: 'must be a UUID' },
          ],
        },
      });
      expect(errorBodyOf(invalidField('body', 'malformed JSON')).message).to.equal('body: malformed JSON');
    });

    it('lists zod issues by dotted path, the whole value by its part, an unknown member by its own path', () => {
      const schema = z.strictObject({ title: z.string().min(1, 'must not be empty'), person: z.strictObject({ name: z.string() }) });
      const r = schema.safeParse({ title: '', person: { name: 1, nick: 'x' }, extra: true });
      expect(r.success).to.equal(false);
      const body = errorBodyOf(zodToInvalid(r.error!));
      expect(body.message).to.match(
        /^title: must not be empty; person\.name: .*; person: Unrecognized key: "nick"; body: Unrecognized key: "extra"$/,
      );
      expect(body.details?.fields.map((f) => f.field)).to.deep.equal(['title', 'person.name', 'person.nick', 'extra']);
      const whole = z.object({ take: z.number() }).safeParse('text');
      expect(errorBodyOf(zodToInvalid(whole.error!, 'query')).details?.fields.map((f) => f.field)).to.deep.equal(['query']);
    });

    it('answers nothing else of details: no cause, no provider code, and no field list on another kind', () => {
      expect(errorBodyOf(fromGrpcStatus(status.UNAVAILABLE, 'connect ECONNREFUSED 10.0.0.7:9081'))).to.have.all.keys(
        'statusCode',
        'message',
        'error',
      );
      const refused = errorBodyOf(
        invalidFields([{ field: 'provider', message: 'messaging provider refused: no' }], 'messaging provider refused: no', {
          provider_error_code: 131009,
        }),
      );
      expect(refused).to.deep.equal({
        statusCode: 400,
        message: 'messaging provider refused: no',
        error: 'Bad Request',
        details: { fields: [{ field: 'provider', message: 'messaging provider refused: no' }] },
      });
      const odd = new AppError('not_found', 'Lead not found', { fields: [{ field: 'id', message: 'x' }] });
      expect(errorBodyOf(odd)).to.deep.equal({ statusCode: 404, message: 'Lead not found', error: 'Not Found' });
    });

    it('gives every 400 its fields (issue 23 item 14): a business rule by its field, bracketed indexes dotted', () => {
      expect(errorBodyOf(invalidField('tags[1]', 'unknown tag'))).to.deep.equal({
        statusCode: 400,
        message: 'tags[1]: unknown tag',
        error: 'Bad Request',
        details: { fields: [{ field: 'tags.1', message: 'unknown tag' }] },
      });
      // One that lost its list (a malformed one, or a peer that sent none) still answers one: the whole request.
      expect(errorBodyOf(new AppError('invalid', 'x: y', { fields: ['x'] })).details).to.deep.equal({
        fields: [{ field: 'request', message: 'x: y' }],
      });
      expect(errorBodyOf(fromGrpcStatus(status.INVALID_ARGUMENT, 'stage_id: no such stage')).details?.fields).to.have.length(1);
    });

    it('keeps a 400’s fields across gRPC', async () => {
      const handler = unary(createLogger('test', 'silent'), async () => {
        throw invalidField('crm_lead_id', 'no such lead');
      });
      const trailer = await new Promise<string | undefined>((resolve) =>
        handler({ request: {}, metadata: new Metadata() } as unknown as ServerUnaryCall<unknown, unknown>, (err) =>
          resolve(err?.metadata?.get(ERROR_FIELDS_METADATA)[0] as string | undefined),
        ),
      );
      const back = fromGrpcStatus(status.INVALID_ARGUMENT, 'crm_lead_id: no such lead', parseErrorFields(trailer));
      expect(errorBodyOf(back).details).to.deep.equal({ fields: [{ field: 'crm_lead_id', message: 'no such lead' }] });
      expect(parseErrorFields('not json')).to.equal(undefined);
    });
  });

  it('turns a peer deadline into unavailable', () => {
    expect(fromGrpcStatus(status.DEADLINE_EXCEEDED, 'slow').kind).to.equal('unavailable');
  });
  it('treats an id that is not a UUID as not found', () => {
    expect(isUuid('0190a3c2-6a4f-7b1e-8a3b-0123456789ab')).to.equal(true);
    expect(() => requireUuid('42', 'Lead')).to.throw(AppError, 'Lead not found');
  });
});
