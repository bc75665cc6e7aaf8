import { describePlatformContract } from '@svc/platform/testing-suite';
import { chatService } from '../src/service.js';

describePlatformContract(chatService);
