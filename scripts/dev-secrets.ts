/**
 * `.data/dev-secrets.json` (git-ignored): the admin token and identity secret a local stack keeps across
 * restarts, and the demo company with its plain key so every start can print them again.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface DemoRecord {
  company_id: string;
  master_user_id: string;
  integration_user_id: string;
  key_id: string;
  /** The plain integration key (shown by the admin API only once). */
  key: string;
  pipeline_id: string;
  /** The database the demo lives in (URL without password, or the embedded cluster's folder). */
  database: string;
  created_at: string;
}

export interface DevSecrets {
  admin_token: string;
  identity_token_secret: string;
  /** The demo of the most recent start. */
  demo?: DemoRecord;
  /** The demo of each database a start has used (local, embedded, DATABASE_URL), by DemoRecord.database. */
  demos?: Record<string, DemoRecord>;
}

export class DevSecretsFile {
  constructor(readonly file: string) {}

  /** Reads the file, filling in (and saving) whatever is missing. */
  load(): DevSecrets {
    let current: Partial<DevSecrets> = {};
    if (existsSync(this.file)) {
      try {
        current = JSON.parse(readFileSync(this.file, 'utf8')) as Partial<DevSecrets>;
      } catch (err) {
        throw new Error(`${this.file} is not valid JSON (${(err as Error).message}); fix or delete it`);
      }
    }
    const secrets: DevSecrets = {
      ...current,
      admin_token:
        typeof current.admin_token === 'string' && current.admin_token.length >= 16
          ? current.admin_token
          : `adm_${randomBytes(24).toString('hex')}`,
      identity_token_secret:
        typeof current.identity_token_secret === 'string' && current.identity_token_secret.length >= 32
          ? current.identity_token_secret
          : randomBytes(32).toString('hex'),
    };
    if (secrets.admin_token !== current.admin_token || secrets.identity_token_secret !== current.identity_token_secret) this.save(secrets);
    return secrets;
  }

  save(secrets: DevSecrets): void {
    mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}

/** A database URL without its password, to record which database something lives in. */
export function databaseLabel(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}
