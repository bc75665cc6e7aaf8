export { dbDefinition } from './db.js';
export { LeadSql } from './leads/lead.sql.js';
export { crmService } from './service.js';
