import { migrateMain } from '@svc/platform/service';
import { tasksService } from './service.js';

await migrateMain(tasksService);
