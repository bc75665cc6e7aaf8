import {
  type Client,
  type handleUnaryCall,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import {
  AppError,
  ERROR_FIELDS_METADATA,
  errorFieldsOf,
  fromGrpcStatus,
  grpcStatusOf,
  isNumberOutOfRange,
  isStoreUnavailable,
  numberOutOfRange,
  parseErrorFields,
} from '../errors.js';
import type { Logger } from '../logging.js';
import { currentRequestId, REQUEST_ID_HEADER, wellFormedRequestId, withRequestId } from '../request-id.js';
import { currentTraceparent, SpanKind, SpanStatusCode, startSpan, TRACEPARENT, tracerOf, withSpan } from '../tracing.js';

export interface GrpcServiceRegistration {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

export interface RunningGrpcServer {
  server: Server;
  port: number;
  health: HealthImplementation;
  stop(graceMs: number): Promise<void>;
}

export async function startGrpcServer(host: string, port: number, services: GrpcServiceRegistration[]): Promise<RunningGrpcServer> {
  const server = new Server({ 'grpc.keepalive_permit_without_calls': 1 });
  for (const s of services) server.addService(s.definition, s.implementation);
  const health = new HealthImplementation({ '': 'NOT_SERVING' });
  health.addToServer(server);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    server,
    port: bound,
    health,
    stop: (graceMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

/**
 * Maps the closed error set to gRPC codes exactly once. A well-formed `x-request-id` is served under, so every log
 * line names its request (decision 0140); none is made up.
 */
export function unary<Req, Res>(logger: Logger, handler: (request: Req) => Promise<Res>): handleUnaryCall<Req, Res> {
  const serve = (request: Req, callback: sendUnaryData<Res>) => {
    handler(request).then(
      (res) => callback(null, res),
      (caught: unknown) => {
        let err = caught;
        if (isNumberOutOfRange(err)) {
          logger.warn({ err }, 'grpc handler: a number beyond its column reached the store');
          err = numberOutOfRange();
        }
        if (err instanceof AppError) {
          const metadata = new Metadata();
          const fields = errorFieldsOf(err);
          if (fields !== undefined) metadata.set(ERROR_FIELDS_METADATA, fields);
          callback({ code: grpcStatusOf(err.kind), details: err.message, metadata }, null);
          return;
        }
        if (isStoreUnavailable(err)) {
          // A restarting database is retryable, as the HTTP side's 503 (decision 0123).
          logger.warn({ err }, 'grpc handler: a dependency is unavailable');
          callback({ code: grpcStatusOf('unavailable'), details: 'temporarily unavailable', metadata: new Metadata() }, null);
          return;
        }
        logger.error({ err }, 'grpc handler failed');
        callback({ code: grpcStatusOf('internal'), details: 'internal error', metadata: new Metadata() }, null);
      },
    );
  };
  const byId = (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    const requestId = wellFormedRequestId(call.metadata.get(REQUEST_ID_HEADER)[0]);
    if (requestId === undefined) serve(call.request, callback);
    else withRequestId(requestId, () => serve(call.request, callback));
  };
  const service = String(logger.bindings().service ?? '');
  return (call, callback) => {
    const tracer = tracerOf(service);
    if (!tracer) return byId(call, callback);
    const traceparent = call.metadata.get(TRACEPARENT)[0];
    const span = startSpan(tracer, `grpc ${call.getPath()}`, SpanKind.SERVER, typeof traceparent === 'string' ? traceparent : undefined, {
      'rpc.system': 'grpc',
      'rpc.method': call.getPath(),
    });
    withSpan(span, () =>
      byId(call, (err, res) => {
        if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.details ?? '' });
        span.end();
        callback(err, res);
      }),
    );
  };
}

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (err: import('@grpc/grpc-js').ServiceError | null, res: Res) => void,
) => unknown;

/**
 * Every call has a deadline. The request id travels as `x-request-id` (decision 0140); a caller outside the
 * AsyncLocalStorage (the gateway, decision 0146) passes `requestId`.
 */
export function callUnary<Req, Res>(
  client: Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  deadlineMs = 2000,
  requestId: string | undefined = currentRequestId(),
): Promise<Res> {
  const metadata = new Metadata();
  if (requestId !== undefined) metadata.set(REQUEST_ID_HEADER, requestId);
  const traceparent = currentTraceparent();
  if (traceparent !== undefined) metadata.set(TRACEPARENT, traceparent);
  return new Promise<Res>((resolve, reject) => {
    method.call(client, request, metadata, { deadline: new Date(Date.now() + deadlineMs) }, (err, res) => {
      if (err) reject(fromGrpcStatus(err.code, err.details || err.message, parseErrorFields(err.metadata?.get(ERROR_FIELDS_METADATA)[0])));
      else resolve(res);
    });
  });
}
