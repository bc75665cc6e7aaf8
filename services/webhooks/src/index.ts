export { webhooksService } from './service.js';
export { svcSignature } from './deliveries/signing.js';
