import { migrateMain } from '@svc/platform/service';
import { chatService } from './service.js';

await migrateMain(chatService);
