import { createHash } from 'node:crypto';
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { type RunningGrpcServer, startGrpcServer } from '@svc/platform/grpc/server';
import { CrmServiceService, type ResolveKeyRequest, type ResolveKeyResponse } from '@svc/proto/crm/v1/crm';

/**
 * crm's gRPC as the gateway's tests need it: `keys` maps each plain key to its key id, every key has every
 * permission and belongs to `company`, created by `user`; any other key is unknown.
 */
export function startKeyResolver(keys: Record<string, string>, company = 'c-1', user = 'u-1'): Promise<RunningGrpcServer> {
  const idOf = new Map(Object.entries(keys).map(([plain, id]) => [createHash('sha256').update(plain).digest('hex'), id]));
  return startGrpcServer('127.0.0.1', 0, [
    {
      definition: CrmServiceService,
      implementation: {
        resolveKey: (call: ServerUnaryCall<ResolveKeyRequest, ResolveKeyResponse>, done: sendUnaryData<ResolveKeyResponse>) => {
          const id = idOf.get(call.request.key_hash);
          done(
            null,
            id
              ? {
                  key: { id, company_id: company, created_by_user_id: user, permissions: ['*'], active: true, deleted: false },
                  creator: { id: user, company_id: company, name: 'U', email: 'u@x.test', active: true, archived: false },
                }
              : {},
          );
        },
        getCompany: () => undefined,
        getUser: () => undefined,
      },
    },
  ]);
}

/** Every service's HTTP upstream pointed at one `url`, and crm's gRPC at `grpcPort`: the gateway's env for a test upstream. */
export function oneUpstream(url: string, grpcPort: number): Record<string, string> {
  return { CRM_URL: url, TASKS_URL: url, CHAT_URL: url, FILES_URL: url, WEBHOOKS_URL: url, CRM_GRPC_URL: `127.0.0.1:${grpcPort}` };
}
