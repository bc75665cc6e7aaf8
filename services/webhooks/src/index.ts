export { svcSignature } from './deliveries/signing.js';
export { webhooksService } from './service.js';
