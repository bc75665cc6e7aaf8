#!/usr/bin/env node
// `npm run bundle`: compiles each deployable's entry points (main, and migrate for the services) with esbuild into
// dist/<name>/{main,migrate}.mjs. The repository's own workspaces (@svc/*, TypeScript sources) are bundled in;
// every other package stays an import of node_modules, installed in the image by `npm ci --omit=dev`. Containers
// then start plain JavaScript instead of compiling TypeScript with tsx at every start (decision 0106).
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEPLOYABLES = ['gateway', 'crm', 'tasks', 'chat', 'files', 'webhooks'];
const entry = (name, file) => (name === 'gateway' ? `gateway/src/${file}.ts` : `services/${name}/src/${file}.ts`);

/** Bare imports other than our workspaces stay external (resolved from node_modules at run time). */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@svc/') ? undefined : { path: args.path, external: true }));
  },
};

export async function bundle(names = DEPLOYABLES, outRoot = join(root, 'dist')) {
  for (const name of names) {
    const outdir = join(outRoot, name);
    rmSync(outdir, { recursive: true, force: true });
    const entryPoints = ['main', 'migrate']
      .filter((f) => existsSync(join(root, entry(name, f))))
      .map((f) => ({ in: join(root, entry(name, f)), out: f }));
    await build({
      entryPoints,
      outdir,
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'esm',
      outExtension: { '.js': '.mjs' },
      sourcemap: 'linked',
      logLevel: 'warning',
      plugins: [externalPackages],
    });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  await bundle(names.length ? names : DEPLOYABLES);
  console.log(`bundled ${(names.length ? names : DEPLOYABLES).join(', ')} into dist/`);
}
