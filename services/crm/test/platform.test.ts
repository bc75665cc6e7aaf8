import { describePlatformContract } from '@svc/platform/testing-suite';
import { crmService } from '../src/service.js';

describePlatformContract(crmService);
