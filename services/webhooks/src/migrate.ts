import { migrateMain } from '@svc/platform/service';
import { webhooksService } from './service.js';

await migrateMain(webhooksService);
