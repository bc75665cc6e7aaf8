/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A process's /metrics, read: its samples, and every metric family it registers (from `# TYPE`, samples or not). */
export interface Scrape {
  samples: Sample[];
  families: Set<string>;
  /** Samples of `name` whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): Sample[];
}

export function parseMetrics(text: string): Scrape {
  const samples: Sample[] = [];
  const families = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) \S+$/.exec(line);
    if (type) families.add(type[1]!);
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return {
    samples,
    families,
    find: (name, labels = {}) => samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)),
  };
}

export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return parseMetrics(await res.text());
}

const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads: its identifiers that are not functions (followed by `(`), keywords,
 * label names (inside `{}` and `by (...)`), durations or Grafana variables (`$__rate_interval`).
 */
export function seriesOf(expr: string): string[] {
  const stripped = expr
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/"[^"]*"/g, ' ')
    .replace(/\$\w+/g, ' ')
    .replace(/\b\d[\d.]*(ms|[smhdwy])?\b/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (m[2] || PROMQL_WORDS.has(m[1]!.toLowerCase())) continue;
    names.add(m[1]!);
  }
  return [...names];
}

/** The family a sample name belongs to (a histogram's `_bucket`, `_sum` and `_count` are its family's). */
export const familyOf = (name: string, families: Set<string>): string | undefined => {
  if (families.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count|total|created)$/, '');
  return families.has(base) ? base : undefined;
};
