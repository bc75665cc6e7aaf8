export { type RunningGateway, startGateway } from './gateway.js';
export { EXTERNAL as EXTERNAL_RESOURCES } from './routes.js';
