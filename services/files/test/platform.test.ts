import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describePlatformContract } from '@svc/platform/testing-suite';
import { filesService } from '../src/service.js';

// crm is asked per request only (visibility, counts): the contract needs no crm behind the address.
describePlatformContract(filesService, {
  env: () => ({ CRM_GRPC_URL: '127.0.0.1:1', FILES_LOCAL_DIR: mkdtempSync(join(tmpdir(), 'files-contract-')) }),
});
