// Builds a package of this folder for installing outside the monorepo (decision 0185): ESM and CommonJS from the
// TypeScript source with esbuild, and declarations with tsc. Dependencies are bundled: esbuild's CommonJS output would
// take a CommonJS dependency's whole exports object as its default import (Node's rule for ES modules). Run from the package's
// folder (`npm run build`, also npm pack's prepack).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const dir = process.cwd();
const dist = join(dir, 'dist');
rmSync(dist, { recursive: true, force: true });
const common = { entryPoints: [join(dir, 'src/index.ts')], bundle: true, platform: 'node', target: 'node20', logLevel: 'warning' };
await build({ ...common, format: 'esm', outfile: join(dist, 'index.js') });
await build({ ...common, format: 'cjs', outfile: join(dist, 'index.cjs') });
execFileSync(process.execPath, [join(import.meta.dirname, '../node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
// tsc does not copy hand-written declaration files (the client's generated schema) into its output.
for (const file of readdirSync(join(dir, 'src')).filter((f) => f.endsWith('.d.ts'))) copyFileSync(join(dir, 'src', file), join(dist, file));
copyFileSync(join(dist, 'index.d.ts'), join(dist, 'index.d.cts'));
if (!existsSync(join(dist, 'index.d.ts'))) throw new Error('no declarations were written');
