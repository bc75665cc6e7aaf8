#!/usr/bin/env node
// Bundles one deployable (or all) into plain JavaScript for the container images: dist/<name>/main.mjs and, for a
// service, dist/<name>/migrate.mjs and replay.mjs (the operators' event replay), each a single ES module with every dependency inside, so the runtime image
// needs no node_modules, no tsx and no TypeScript compile at start (decision 0105); and healthcheck.mjs, the image's
// HEALTHCHECK (GET /healthz on the deployable's HTTP port).
//
//   node deploy/scripts/bundle.mjs [name...] [--out dir]     (no name: all six)
//   node deploy/scripts/bundle.mjs --image <name> --out dir  (the Dockerfile: exactly one, named by DEPLOYABLE)
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Files a deployable reads at run time by module resolution, copied beside its bundle under the same relative path
 * (the gateway serves /docs from swagger-ui-dist, found with require.resolve).
 */
const runtimeFiles = {
  gateway: ['package.json', 'swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'].map((f) => `node_modules/swagger-ui-dist/${f}`),
};

/** Each deployable's entry points, relative to the monorepo root (the charts' component.main/.migrate). */
export const deployables = {
  gateway: { main: 'gateway/src/main.ts' },
  crm: {
    main: 'services/crm/src/main.ts',
    migrate: 'services/crm/src/migrate.ts',
    replay: 'services/crm/src/replay.ts',
  },
  tasks: {
    main: 'services/tasks/src/main.ts',
    migrate: 'services/tasks/src/migrate.ts',
    replay: 'services/tasks/src/replay.ts',
  },
  chat: {
    main: 'services/chat/src/main.ts',
    migrate: 'services/chat/src/migrate.ts',
    replay: 'services/chat/src/replay.ts',
  },
  files: {
    main: 'services/files/src/main.ts',
    migrate: 'services/files/src/migrate.ts',
    replay: 'services/files/src/replay.ts',
  },
  webhooks: {
    main: 'services/webhooks/src/main.ts',
    migrate: 'services/webhooks/src/migrate.ts',
    replay: 'services/webhooks/src/replay.ts',
  },
};

// CommonJS dependencies (grpc-js, pg, express, ...) call require() for Node built-ins; an ES module bundle has no
// require of its own, so one is made for it (and __dirname/__filename for the few that read them).
const banner = [
  "import { createRequire as __svcCreateRequire } from 'node:module';",
  "import { fileURLToPath as __svcFileURLToPath } from 'node:url';",
  "import { dirname as __svcDirname } from 'node:path';",
  'const require = __svcCreateRequire(import.meta.url);',
  'const __filename = __svcFileURLToPath(import.meta.url);',
  'const __dirname = __svcDirname(__filename);',
].join('\n');

/**
 * The variable and default of each deployable's HTTP port (the defaults of its configuration, which the images no
 * longer repeat in ENV): the health check asks that port unless the variable says otherwise.
 */
export const httpPorts = {
  gateway: { env: 'PORT', port: 8080 },
  crm: { env: 'HTTP_PORT', port: 8081 },
  tasks: { env: 'HTTP_PORT', port: 8082 },
  chat: { env: 'HTTP_PORT', port: 8083 },
  files: { env: 'HTTP_PORT', port: 8084 },
  webhooks: { env: 'HTTP_PORT', port: 8085 },
};

/** Bundles `name` into `outDir/<name>/`; returns the files written. */
export async function bundle(name, outDir = join(root, 'dist')) {
  const entries = deployables[name];
  if (!entries) throw new Error(`unknown deployable ${name}; one of ${Object.keys(deployables).join(', ')}`);
  const dir = join(outDir, name);
  await mkdir(dir, { recursive: true });
  const written = [];
  for (const [kind, entry] of Object.entries(entries)) {
    const outfile = join(dir, `${kind}.mjs`);
    await build({
      absWorkingDir: root,
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      banner: { js: banner },
      sourcemap: 'linked',
      // Optional peers that the libraries load only when configured (other SQL dialects, native accelerators,
      // pretty printers); none is installed or used here.
      external: optionalPeers,
      plugins: [healthProtoNextToBundle],
      logLevel: 'warning',
      legalComments: 'none',
      // Class and function names as written: the platform reads MikroORM's property types by class name
      // (definedColumns), which esbuild would otherwise rename when two modules declare the same name.
      keepNames: true,
    });
    written.push(outfile);
  }
  const { env, port } = httpPorts[name];
  const healthcheck = join(dir, 'healthcheck.mjs');
  await writeFile(
    healthcheck,
    `// The image's HEALTHCHECK: GET /healthz on ${name}'s HTTP port (${env}, ${port} by default). Written by bundle.mjs.\n` +
      `const port = process.env.${env} || '${port}';\n` +
      "fetch('http://127.0.0.1:' + port + '/healthz', { signal: AbortSignal.timeout(2500) }).then(\n" +
      '  (r) => process.exit(r.ok ? 0 : 1),\n' +
      '  () => process.exit(1),\n' +
      ');\n',
  );
  written.push(healthcheck);
  await cp(join(root, 'node_modules/grpc-health-check/proto'), join(dir, 'proto'), { recursive: true });
  written.push(join(dir, 'proto/health/v1/health.proto'));
  for (const file of runtimeFiles[name] ?? []) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await cp(join(root, file), join(dir, file));
    written.push(join(dir, file));
  }
  return written;
}

// grpc-health-check reads its .proto at load time from its package folder (`${__dirname}/../../proto`); in the
// bundle __dirname is the bundle's folder, so the file is copied beside it and the path pointed there.
const healthProtoNextToBundle = {
  name: 'health-proto-next-to-bundle',
  setup(b) {
    b.onLoad({ filter: /grpc-health-check[\\/]build[\\/]src[\\/]health\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      // biome-ignore lint/suspicious/noTemplateCurlyInString: grpc-health-check's own source text, matched literally
      const patched = source.replaceAll('`${__dirname}/../../proto`', '`${__dirname}/proto`');
      if (patched === source) throw new Error('grpc-health-check changed how it finds health.proto; see bundle.mjs');
      return { contents: patched.replace("'../../proto/health/v1/health.proto'", "'proto/health/v1/health.proto'"), loader: 'js' };
    });
  },
};

const optionalPeers = [
  'pg-native',
  'better-sqlite3',
  'sqlite3',
  'mysql',
  'mysql2',
  'tedious',
  'oracledb',
  'pg-query-stream',
  'libsql',
  '@libsql/*',
  'mariadb',
  'pino-pretty',
  'bufferutil',
  'utf-8-validate',
];

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--out');
  const out = at >= 0 ? resolve(args[at + 1]) : undefined;
  const image = args.indexOf('--image');
  const names = args.filter((_a, i) => !(at >= 0 && (i === at || i === at + 1)) && i !== image);
  // An image holds one deployable: an empty DEPLOYABLE must not bundle all six into it.
  if (image >= 0 && (names.length !== 1 || !deployables[names[0]])) {
    console.error(
      `set the build argument DEPLOYABLE to one of ${Object.keys(deployables).join(', ')} (given: ${names.join(' ') || 'none'})`,
    );
    process.exit(2);
  }
  for (const name of names.length ? names : Object.keys(deployables)) {
    if (!existsSync(join(root, deployables[name]?.main ?? ''))) throw new Error(`no entry point for ${name}`);
    const files = await bundle(name, out);
    console.log(`${name}: ${files.join(', ')}`);
  }
}
