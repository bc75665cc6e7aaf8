export { crmPlan } from './companies/plan.js';
export { dbDefinition, poolOf } from './db.js';
export { createLeadBody } from './leads/lead.schema.js';
export { Leads } from './leads/lead.service.js';
export { LeadStore } from './leads/lead.store.js';
export { crmService, marketingOrigins } from './service.js';
export { TaskCounts } from './tasks/task-counts.js';
