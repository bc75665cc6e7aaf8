import { inTransaction, nativePool as poolOf } from '@svc/platform/db/native';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool } from 'pg';

/** The `pg` pool under the service's MikroORM: the delivery hot paths (issue, claim, record) use it directly. */
export const nativePool = (ctx: ServiceContext): Promise<Pool> => poolOf(ctx.orm);

export { inTransaction };
