import { runMain } from '@svc/platform/service';
import { filesService } from './service.js';

await runMain(filesService);
