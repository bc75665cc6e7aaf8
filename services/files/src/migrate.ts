import { migrateMain } from '@svc/platform/service';
import { filesService } from './service.js';

await migrateMain(filesService);
