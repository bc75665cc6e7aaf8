import { runMain } from '@svc/platform/service';
import { chatService } from './service.js';

await runMain(chatService);
