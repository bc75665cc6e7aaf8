import { randomBytes } from 'node:crypto';
import { chatService } from '@svc/chat';
import { crmService } from '@svc/crm';
import { filesService } from '@svc/files';
import { type RunningGateway, startGateway } from '@svc/gateway';
import { connectNats } from '@svc/platform/events/nats';
import { createLogger } from '@svc/platform/logging';
import { type RunningService, startService } from '@svc/platform/service';
import { createTestDatabase, randomSuffix, TEST_NATS_URL, TEST_REDIS_URL, type TestDatabase } from '@svc/platform/testing';
import { tasksService } from '@svc/tasks';
import { webhooksService } from '@svc/webhooks';

export interface Stack {
  gatewayUrl: string;
  adminToken: string;
  env: Record<string, string>;
  gatewayEnv: Record<string, string>;
  db: TestDatabase;
  services: Record<'crm' | 'tasks' | 'chat' | 'files' | 'webhooks', RunningService>;
  gateway: RunningGateway;
  stop(): Promise<void>;
}

/**
 * The whole system in this process against the real Postgres, NATS and Redis: a fresh database, a
 * stream and subject prefix of this run only, every service on port 0 and the gateway in front.
 */
export async function startStack(overrides: { gateway?: Record<string, string> } = {}): Promise<Stack> {
  const run = randomSuffix();
  const db = await createTestDatabase();
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: TEST_NATS_URL,
    NATS_STREAM: `T_${run}`,
    EVENT_SUBJECT_PREFIX: `t${run}`,
    IDENTITY_TOKEN_SECRET: randomBytes(32).toString('hex'),
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    DB_POOL_MAX: '5',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  };
  const crm = await startService(crmService, env);
  const peerEnv = { ...env, CRM_GRPC_URL: crm.grpcAddress };
  const [tasks, chat, files, webhooks] = await Promise.all([
    startService(tasksService, peerEnv),
    startService(chatService, env),
    startService(filesService, env),
    startService(webhooksService, peerEnv),
  ]);
  const adminToken = randomBytes(24).toString('hex');
  const gatewayEnv: Record<string, string> = {
    PORT: '0',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `t${run}:`,
    ADMIN_TOKEN: adminToken,
    IDENTITY_TOKEN_SECRET: env.IDENTITY_TOKEN_SECRET!,
    CRM_URL: crm.httpUrl,
    TASKS_URL: tasks.httpUrl,
    CHAT_URL: chat.httpUrl,
    FILES_URL: files.httpUrl,
    WEBHOOKS_URL: webhooks.httpUrl,
    CRM_GRPC_URL: crm.grpcAddress,
    LOG_LEVEL: env.LOG_LEVEL!,
    ...overrides.gateway,
  };
  const gateway = await startGateway(gatewayEnv);
  const services = { crm, tasks, chat, files, webhooks };
  return {
    gatewayUrl: gateway.url,
    adminToken,
    env,
    gatewayEnv,
    db,
    services,
    gateway,
    stop: async () => {
      await gateway.stop();
      await Promise.all([tasks, chat, files, webhooks].map((s) => s.stop()));
      await crm.stop();
      const nats = await connectNats(TEST_NATS_URL, 'test-cleanup', createLogger('test', 'silent'));
      await nats.jsm.streams.delete(env.NATS_STREAM!).catch(() => undefined);
      await nats.nc.close();
      await db.drop();
    },
  };
}
