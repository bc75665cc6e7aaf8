/**
 * Unknown fields in a Kubernetes manifest, found with the field lists of the Kubernetes version the charts declare:
 * kubernetes-types@1.30.0 (the API's OpenAPI definitions of Kubernetes 1.30 as TypeScript, one file per group
 * version). kubernetes-models' validate() checks types and required fields but lets any unknown key through, which
 * the API server drops or (with strict field validation) refuses: a misspelt `readinessProbe`, a field in the wrong
 * place, or one a later Kubernetes added would render and do nothing on 1.30 (decision 0192).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

type Shape = { kind: 'object'; fields: Map<string, Shape> } | { kind: 'array'; of: Shape } | { kind: 'map'; of: Shape } | { kind: 'leaf' };

/** The Kubernetes version whose definitions are read: the charts' kubeVersion floor. */
export const KUBERNETES_TYPES_VERSION = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('kubernetes-types/package.json'), 'utf8'),
).version as string;

const typesRoot = dirname(createRequire(import.meta.url).resolve('kubernetes-types/package.json'));
const LEAF: Shape = { kind: 'leaf' };

interface Declarations {
  /** Each interface's fields, their type text unparsed. */
  interfaces: Map<string, Map<string, string>>;
  /** Imported name → the declaration file it comes from. */
  imports: Map<string, string>;
}
const files = new Map<string, Declarations>();
const shapes = new Map<string, Shape>();

function declarations(file: string): Declarations {
  const known = files.get(file);
  if (known) return known;
  const text = readFileSync(file, 'utf8').replace(/\/\*\*[\s\S]*?\*\//g, '');
  const imports = new Map<string, string>();
  for (const m of text.matchAll(/import \{ ([^}]+) \} from "([^"]+)";/g)) {
    for (const name of (m[1] as string).split(',').map((n) => n.trim())) imports.set(name, join(dirname(file), `${m[2]}.d.ts`));
  }
  const interfaces = new Map<string, Map<string, string>>();
  for (const m of text.matchAll(/export interface (\w+)(?: extends [\w, ]+)? \{\n/g)) {
    const fields = new Map<string, string>();
    let i = (m.index as number) + m[0].length;
    for (;;) {
      const prop = /^\s*(?:readonly\s+)?"?([\w$.-]+)"?\??: /.exec(text.slice(i));
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
      fields.set(prop[1] as string, text.slice(i, j).trim());
      i = j + 1;
    }
    interfaces.set(m[1] as string, fields);
  }
  const parsed = { interfaces, imports };
  files.set(file, parsed);
  return parsed;
}

/** The shape of interface `name` declared in (or imported by) `file`; a type alias or a literal is a leaf. */
function shapeOf(file: string, name: string): Shape {
  const d = declarations(file);
  const fields = d.interfaces.get(name);
  if (!fields) {
    const from = d.imports.get(name);
    return from && existsSync(from) ? shapeOf(from, name) : LEAF;
  }
  const key = `${file}#${name}`;
  const known = shapes.get(key);
  if (known) return known;
  const shape: Shape = { kind: 'object', fields: new Map() };
  shapes.set(key, shape); // before the fields: the definitions are recursive (JSONSchemaProps)
  for (const [field, type] of fields) shape.fields.set(field, shapeOfType(type, file));
  return shape;
}

function shapeOfType(type: string, file: string): Shape {
  const array = /^Array<([\s\S]+)>$/.exec(type);
  if (array) return { kind: 'array', of: shapeOfType((array[1] as string).trim(), file) };
  const map = /^\{\s*\[\w+: string\]: ([\s\S]+?);?\s*\}$/.exec(type);
  if (map) return { kind: 'map', of: shapeOfType((map[1] as string).trim(), file) };
  return /^\w+$/.test(type) ? shapeOf(file, type) : LEAF; // strings, numbers, literal unions
}

/** The declaration file of an apiVersion: `v1` is core/v1, `networking.k8s.io/v1` networking/v1. */
function fileOf(apiVersion: string): string {
  const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['core', apiVersion];
  return join(typesRoot, group.split('.')[0] as string, `${version}.d.ts`);
}

/** Whether Kubernetes 1.30 defines this kind (a CRD's kind, such as a ServiceMonitor, is not). */
export function hasModel(apiVersion: string, kind: string): boolean {
  const file = fileOf(apiVersion);
  return existsSync(file) && declarations(file).interfaces.has(kind);
}

/** Every path in `manifest` whose field its API does not define, e.g. `spec.template.spec.containers[0].bogus`. */
export function unknownFields(manifest: { apiVersion: string; kind: string }): string[] {
  if (!hasModel(manifest.apiVersion, manifest.kind)) throw new Error(`no model for ${manifest.apiVersion} ${manifest.kind}`);
  const out: string[] = [];
  walk(manifest, shapeOf(fileOf(manifest.apiVersion), manifest.kind), '', out);
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
