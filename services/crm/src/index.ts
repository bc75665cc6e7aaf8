export { crmService } from './service.js';
export { dbDefinition } from './db.js';
