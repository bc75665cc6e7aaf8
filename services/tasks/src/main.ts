import { runMain } from '@svc/platform/service';
import { tasksService } from './service.js';

await runMain(tasksService);
