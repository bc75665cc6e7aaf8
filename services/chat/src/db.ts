import type { DbDefinition } from '@svc/platform/service';
import { chatService } from './service.js';

export const dbDefinition: DbDefinition = chatService.db;
