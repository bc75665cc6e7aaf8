import { describePlatformContract } from '@svc/platform/testing-suite';
import { filesService } from '../src/service.js';

describePlatformContract(filesService);
