/**
 * A reader of the Dockerfile's instructions, enough for the image tests: continuation lines joined, comments dropped,
 * instructions grouped by stage, a stage's ARGs (given as build arguments, or their defaults) substituted where they
 * are used (`$NAME`, `${NAME}`). Only the syntax this Dockerfile uses (no heredocs, no `${NAME:-word}`).
 */
import { readFileSync } from 'node:fs';

export interface Instruction {
  keyword: string;
  args: string;
}
export interface Stage {
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

export function readDockerfile(path: string, buildArgs: Record<string, string> = {}): Stage[] {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => !/^\s*#/.test(l));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  // ARGs are scoped to the stage that declares them; an ARG without a value nor a build argument is empty.
  let scope: Record<string, string> = {};
  const substitute = (text: string) =>
    text.replace(/\$(?:\{(\w+)\}|(\w+))/g, (m, braced?: string, bare?: string) => scope[(braced ?? bare) as string] ?? m);
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*?)\s*$/.exec(line);
    if (!m) continue;
    const keyword = (m[1] as string).toUpperCase();
    const raw = (m[2] as string).replace(/\s+/g, ' ');
    if (keyword === 'ARG') {
      const [name, value] = raw.split('=', 2) as [string, string | undefined];
      scope[name] = buildArgs[name] ?? value ?? '';
      continue;
    }
    const args = substitute(raw);
    if (keyword === 'FROM') {
      scope = {};
      const from = /^(\S+)(?: AS (\S+))?$/i.exec(args);
      if (!from) throw new Error(`FROM ${args}: not understood`);
      stages.push({ image: from[1] as string, name: from[2], instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`${keyword} before any FROM in ${path}`);
    stage.instructions.push({ keyword, args });
  }
  return stages;
}

export const all = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);

/** COPY's options, sources and destination (the shell form: sources and destination separated by spaces). */
export function copyParts(args: string): { from: string | undefined; sources: string[]; dest: string } {
  const words = args.split(' ');
  const options = words.filter((w) => w.startsWith('--'));
  const paths = words.filter((w) => !w.startsWith('--'));
  const from = options.find((o) => o.startsWith('--from='))?.slice('--from='.length);
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1) as string };
}

/** ENV k=v pairs (the key=value form only). */
export function envOf(stage: Stage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of all(stage, 'ENV')) {
    for (const pair of i.args.split(' ')) {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`ENV ${i.args}: use the key=value form`);
      out[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return out;
}

/** An exec-form (JSON array) CMD or HEALTHCHECK CMD. */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['));
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) throw new Error(`not an exec form: ${args}`);
  return parsed;
}
