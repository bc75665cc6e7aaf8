export { startGateway, type RunningGateway } from './gateway.js';
