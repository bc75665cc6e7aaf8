import { AppError } from '@svc/platform/errors';

export const REDACTED_URL = '[conversion url]';

/** The conversion URL is never logged: a database error quoting it is replaced by a plain error with the URL masked. */
export function withoutSensitiveText(err: unknown, sensitive: readonly string[]): unknown {
  if (err instanceof AppError || !(err instanceof Error) || sensitive.length === 0) return err;
  const scrub = (text: string) => sensitive.reduce((t, s) => (s ? t.split(s).join(REDACTED_URL) : t), text);
  const fields = Object.values(err).map((v) => (typeof v === 'string' ? v : v instanceof Error ? `${v.message}\n${v.stack}` : ''));
  const texts = [err.message, err.stack ?? '', ...fields, err.cause instanceof Error ? `${err.cause.message}\n${err.cause.stack}` : ''];
  if (!texts.some((t) => sensitive.some((s) => s && t.includes(s)))) return err;
  const clean = new Error(scrub(err.message));
  clean.name = err.name;
  clean.stack = scrub(err.stack ?? '');
  return clean;
}
