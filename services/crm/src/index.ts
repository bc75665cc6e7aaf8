export { crmPlan } from './companies/plan.js';
export { dbDefinition } from './db.js';
export { createLeadBody } from './leads/lead.schema.js';
export { Leads } from './leads/lead.service.js';
export { LeadSql } from './leads/lead.sql.js';
export { crmService } from './service.js';
export { TaskCounts } from './tasks/task-counts.js';
