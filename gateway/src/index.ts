export { gatewayConfigSchema } from './config.js';
export { type RunningGateway, startGateway } from './gateway.js';
