export { type RunningGateway, startGateway } from './gateway.js';
