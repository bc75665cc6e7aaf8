import { env, serviceConfigSchema } from '@svc/platform/config';
import { askPlan } from '@svc/platform/events/plan';
import { fileUrlSecret } from '@svc/platform/files/signed-url';
import { CrmPeer } from '@svc/platform/peers/crm';
import type { ServiceDefinition } from '@svc/platform/service';
import { z } from 'zod';
import { dbDefinition, poolOf } from './db.js';
import { fileRoutes, publicFileRoute } from './files/file.http.js';
import { FilePurger } from './files/file.purge.js';
import { FileService } from './files/file.service.js';
import { CrmRecords } from './links/crm-records.js';
import { LocalStorage } from './storage/local.js';
import { S3Storage } from './storage/s3.js';
import type { FileStorage } from './storage/storage.js';

const MIB = 1024 * 1024;
const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

const filesConfig = serviceConfigSchema.extend({
  CRM_GRPC_URL: env.hostPort,
  /** Bytes (the spec's limit for chat files); larger uploads end with 413. */
  FILES_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(5 * 1024 * MIB)
    .default(100 * MIB),
  FILES_STORAGE: z.enum(['local', 's3']).default('local'),
  /** A volume in Kubernetes. */
  FILES_LOCAL_DIR: z.string().min(1).default('./data/files'),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  /** Unset for AWS S3. */
  S3_ENDPOINT: env.httpUrl.optional(),
  S3_FORCE_PATH_STYLE: flag.default(false),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_PREFIX: z.string().default(''),
  S3_PART_SIZE: z.coerce
    .number()
    .int()
    .min(5 * MIB)
    .default(8 * MIB),
  S3_QUEUE_SIZE: z.coerce.number().int().min(1).max(16).default(2),
  /** The gateway's public download route. */
  FILES_PUBLIC_BASE_URL: env.httpUrl.default('http://127.0.0.1:8080/public/files'),
  /** Shared with webhooks; derived from IDENTITY_TOKEN_SECRET when unset. */
  FILE_URL_SIGNING_SECRET: env.secret.optional(),
  /** The row stays. */
  FILES_PURGE_AFTER_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  /** Per replica; 0 turns it off. */
  FILES_PURGE_INTERVAL_MS: z.coerce.number().int().min(0).default(3_600_000),
  FILES_PURGE_BATCH: z.coerce.number().int().min(1).max(1000).default(100),
});
type FilesConfig = z.infer<typeof filesConfig>;

interface Components {
  crm: CrmPeer;
  records: CrmRecords;
  storage: FileStorage;
  files: FileService;
  purger: FilePurger;
}

function storageOf(config: FilesConfig): FileStorage {
  if (config.FILES_STORAGE === 'local') return new LocalStorage(config.FILES_LOCAL_DIR);
  if (!config.S3_BUCKET) throw new Error('S3_BUCKET: is required when FILES_STORAGE is s3');
  return new S3Storage({
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    prefix: config.S3_PREFIX,
    partSize: config.S3_PART_SIZE,
    queueSize: config.S3_QUEUE_SIZE,
  });
}

export const filesService: ServiceDefinition<typeof filesConfig, Components> = {
  name: 'files',
  configSchema: filesConfig,
  defaults: { HTTP_PORT: '8084', GRPC_PORT: '9084', METRICS_PORT: '9184' },
  db: dbDefinition,
  setup: (ctx) => {
    const crm = new CrmPeer(ctx.config.CRM_GRPC_URL);
    const records = new CrmRecords(ctx.config.CRM_GRPC_URL);
    const storage = storageOf(ctx.config);
    const files = new FileService({
      pool: poolOf(ctx.orm),
      storage,
      crm: records,
      maxBytes: ctx.config.FILES_MAX_BYTES,
      signing: {
        baseUrl: ctx.config.FILES_PUBLIC_BASE_URL,
        secret: fileUrlSecret(ctx.config.FILE_URL_SIGNING_SECRET, ctx.config.IDENTITY_TOKEN_SECRET),
      },
    });
    const purger = new FilePurger(poolOf(ctx.orm), storage, {
      retentionDays: ctx.config.FILES_PURGE_AFTER_DAYS,
      intervalMs: ctx.config.FILES_PURGE_INTERVAL_MS,
      batch: ctx.config.FILES_PURGE_BATCH,
      logger: ctx.logger,
    });
    return { crm, records, storage, files, purger };
  },
  api: (_ctx, { files }) => [{ prefix: '/integrations/external', router: fileRoutes(files) }],
  unauthenticated: (_ctx, { files }) => publicFileRoute(files),
  readiness: (_ctx, { storage }) => [{ name: 'storage', check: () => storage.check() }],
  // crm owns the plan (asked over gRPC, cached).
  plan: (_ctx, { crm }) => askPlan((companyId) => crm.getCompany(companyId)),
  // Every replica runs it, sharing the work through skip locked (decision 0136).
  workers: async (_ctx, { crm, records, storage, purger }) => {
    purger.start();
    return async () => {
      await purger.stop();
      crm.close();
      records.close();
      if (storage instanceof S3Storage) storage.close();
    };
  },
};
