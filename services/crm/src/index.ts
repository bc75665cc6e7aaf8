export { dbDefinition } from './db.js';
export { crmService } from './service.js';
