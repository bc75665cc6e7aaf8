import { AppError } from '@svc/platform/errors';

export const REDACTED_URL = '[conversion url]';

/**
 * The full conversion URL is never logged. Our own log lines never carry it, but an unexpected failure is
 * logged with its error, and a database error can quote the row it refused ("Failing row contains ...").
 * Such an error is replaced by a plain one whose message and stack have the URL replaced, and which keeps
 * none of the driver's fields (detail, parameters) nor its cause. Errors of our closed set are answers, not log lines,
 * and pass unchanged.
 */
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
