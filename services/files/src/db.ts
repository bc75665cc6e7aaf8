import type { DbDefinition } from '@svc/platform/service';
import { filesService } from './service.js';

export const dbDefinition: DbDefinition = filesService.db;
