import { inTransaction } from '@svc/platform/db/native';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { requireCompany } from '../companies/company.service.js';
import type { Pipeline, Stage } from './pipeline.entity.js';
import * as store from './pipeline.store.js';

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

export const createPipelineBody = z.strictObject({
  name,
  is_primary: z.boolean().optional(),
  requires_quality_reason: z.boolean().optional(),
  stages: z.array(z.strictObject({ name })).min(1, 'a pipeline needs at least one stage').max(100),
});

export const pipelineView = (p: Pipeline, stages: Stage[]) => ({
  id: p.id,
  name: p.name,
  is_primary: p.isPrimary,
  requires_quality_reason: p.requiresQualityReason,
  stages: stages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
});

/** A company's first pipeline is its primary one; a new primary pipeline demotes the old. */
export async function createPipeline(pool: Pool, companyId: string, body: z.infer<typeof createPipelineBody>) {
  await requireCompany(pool, companyId);
  return inTransaction(pool, async (tx) => {
    await store.lockCompanyPipelines(tx, companyId);
    const hasPrimary = await store.hasPrimary(tx, companyId);
    const isPrimary = body.is_primary ?? !hasPrimary;
    if (isPrimary && hasPrimary) await store.demotePrimary(tx, companyId);
    const pipeline: Pipeline = {
      id: uuidv7(),
      companyId,
      name: body.name,
      isPrimary,
      requiresQualityReason: body.requires_quality_reason ?? false,
      createdAt: new Date(),
    };
    const stages = body.stages.map((s, i): Stage => ({ id: uuidv7(), companyId, pipelineId: pipeline.id, name: s.name, position: i + 1 }));
    await store.insertPipeline(tx, pipeline, stages);
    return pipelineView(pipeline, stages);
  });
}
