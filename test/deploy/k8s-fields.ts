/**
 * Unknown fields in a Kubernetes manifest, found with the field lists of kubernetes-models' type declarations (the
 * API's OpenAPI definitions, one interface per file). kubernetes-models' own validate() checks types and required
 * fields but lets any unknown key through, which the API server drops or (with strict field validation) refuses:
 * a misspelt `readinessProbe` or a field in the wrong place would render and do nothing (decision 0192).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

type Shape = { kind: 'object'; fields: Map<string, Shape> } | { kind: 'array'; of: Shape } | { kind: 'map'; of: Shape } | { kind: 'leaf' };

const require = createRequire(import.meta.url);
const modelsRoot = dirname(require.resolve('kubernetes-models/package.json'));
const LEAF: Shape = { kind: 'leaf' };
const cache = new Map<string, Shape>();

/** The .d.ts a module specifier of these declarations points at, from the file that imports it. */
function resolveDeclaration(from: string, specifier: string): string {
  if (specifier.startsWith('.')) return join(dirname(from), specifier.replace(/\.js$/, '.d.ts'));
  return `${join(dirname(require.resolve(`${specifier.split('/').slice(0, 2).join('/')}/package.json`)), specifier.split('/').slice(2).join('/'))}.d.ts`;
}

/** The shape of the one interface a declaration file exports; a type alias (IntOrString, Quantity) is a leaf. */
function shapeOfFile(file: string): Shape {
  const known = cache.get(file);
  if (known) return known;
  const text = readFileSync(file, 'utf8').replace(/\/\*\*[\s\S]*?\*\//g, '');
  const start = /export interface \w+(?: extends [\w, ]+)? \{\n/.exec(text);
  if (!start) {
    cache.set(file, LEAF);
    return LEAF;
  }
  const shape: Shape = { kind: 'object', fields: new Map() };
  cache.set(file, shape); // before the fields: the definitions are recursive (JSONSchemaProps)
  const imports = new Map<string, string>();
  for (const m of text.matchAll(/import \{ (\w+) \} from "([^"]+)";/g)) imports.set(m[1] as string, m[2] as string);
  let i = start.index + start[0].length;
  for (;;) {
    const prop = /^\s*"([^"]+)"\??: /.exec(text.slice(i));
    if (!prop) break;
    i += prop[0].length;
    // the type runs to the `;` at depth 0 (an inline map spans lines)
    let depth = 0;
    let j = i;
    for (; j < text.length; j++) {
      const c = text[j];
      if (c === '{' || c === '<' || c === '(') depth++;
      else if (c === '}' || c === '>' || c === ')') depth--;
      else if (c === ';' && depth === 0) break;
    }
    shape.fields.set(prop[1] as string, shapeOfType(text.slice(i, j).trim(), file, imports));
    i = j + 1;
  }
  return shape;
}

function shapeOfType(type: string, file: string, imports: Map<string, string>): Shape {
  const array = /^Array<([\s\S]+)>$/.exec(type);
  if (array) return { kind: 'array', of: shapeOfType((array[1] as string).trim(), file, imports) };
  const map = /^\{\s*\[key: string\]: ([\s\S]+?);\s*\}$/.exec(type);
  if (map) return { kind: 'map', of: shapeOfType((map[1] as string).trim(), file, imports) };
  const spec = imports.get(type);
  if (spec) return shapeOfFile(resolveDeclaration(file, spec));
  return LEAF; // strings, numbers, literal unions, free-form objects
}

/** The declaration file of a top-level kind: kubernetes-models/<group>/<version>/<Kind>.d.ts (core: v1/<Kind>). */
export function hasModel(apiVersion: string, kind: string): boolean {
  return existsSync(join(modelsRoot, apiVersion, `${kind}.d.ts`));
}

/** Every path in `manifest` whose field its API does not define, e.g. `spec.template.spec.containers[0].bogus`. */
export function unknownFields(manifest: { apiVersion: string; kind: string }): string[] {
  const file = join(modelsRoot, manifest.apiVersion, `${manifest.kind}.d.ts`);
  if (!existsSync(file)) throw new Error(`no model for ${manifest.apiVersion} ${manifest.kind}`);
  const out: string[] = [];
  walk(manifest, shapeOfFile(file), '', out);
  return out;
}

function walk(value: unknown, shape: Shape, path: string, out: string[]): void {
  if (value === null || typeof value !== 'object') return;
  if (shape.kind === 'array' && Array.isArray(value)) {
    for (const [i, v] of value.entries()) walk(v, shape.of, `${path}[${i}]`, out);
  } else if (shape.kind === 'map') {
    for (const [k, v] of Object.entries(value)) walk(v, shape.of, `${path}.${k}`, out);
  } else if (shape.kind === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      const field = shape.fields.get(k);
      const at = path ? `${path}.${k}` : k;
      if (!field) out.push(at);
      else walk(v, field, at, out);
    }
  }
}
