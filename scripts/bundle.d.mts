export const DEPLOYABLES: readonly string[];
/** Compiles the entry points of `names` into `<outRoot>/<name>/{main,migrate}.mjs`. */
export function bundle(names?: readonly string[], outRoot?: string): Promise<void>;
