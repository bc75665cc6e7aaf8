import { migrateMain } from '@svc/platform/service';
import { crmService } from './service.js';

await migrateMain(crmService);
