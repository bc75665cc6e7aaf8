export type { Delivery } from './deliveries/delivery.entity.js';
export { buildHeaders } from './deliveries/sender.js';
export { svcSignature } from './deliveries/signing.js';
export { webhooksService } from './service.js';
