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
import { AppError, fromGrpcStatus, grpcStatusOf, isStoreUnavailable } from '../errors.js';
import type { Logger } from '../logging.js';

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

/** Serves the given services plus the standard grpc.health.v1 service. */
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
 * Adapts an async handler to grpc-js, mapping our closed error set to gRPC status codes exactly once.
 */
export function unary<Req, Res>(logger: Logger, handler: (request: Req) => Promise<Res>): handleUnaryCall<Req, Res> {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    handler(call.request).then(
      (res) => callback(null, res),
      (err: unknown) => {
        if (err instanceof AppError) {
          callback({ code: grpcStatusOf(err.kind), details: err.message, metadata: new Metadata() }, null);
          return;
        }
        if (isStoreUnavailable(err)) {
          // The caller may retry: a database restarting is UNAVAILABLE, as the HTTP side answers 503 (decision 0123).
          logger.warn({ err }, 'grpc handler: a dependency is unavailable');
          callback({ code: grpcStatusOf('unavailable'), details: 'temporarily unavailable', metadata: new Metadata() }, null);
          return;
        }
        logger.error({ err }, 'grpc handler failed');
        callback({ code: grpcStatusOf('internal'), details: 'internal error', metadata: new Metadata() }, null);
      },
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
 * Calls a unary method of a ts-proto client with a deadline (every call has one) and turns a gRPC
 * failure back into our error set.
 */
export function callUnary<Req, Res>(client: Client, method: UnaryMethod<Req, Res>, request: Req, deadlineMs = 2000): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    method.call(client, request, new Metadata(), { deadline: new Date(Date.now() + deadlineMs) }, (err, res) => {
      if (err) reject(fromGrpcStatus(err.code, err.details || err.message));
      else resolve(res);
    });
  });
}
