import { stopWorld } from './world.js';

/** The suite's shared system is stopped once, after every file ran. */
export const mochaHooks = {
  async afterAll() {
    await stopWorld();
  },
};
