// A tool's inputSchema as form fields, and the form's values back as the call's arguments.
import type { JsonSchema } from './types';

export type FieldKind = 'string' | 'enum' | 'number' | 'integer' | 'boolean' | 'json';

export interface SchemaField {
  name: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  options: string[];
  /** The enum values as the schema gives them, matching `options` one to one. */
  enumValues: unknown[];
  hasDefault: boolean;
}

/** What an input binds: text, a number (null when empty) for number inputs, a boolean for checkboxes. */
export type FieldValue = string | number | boolean | null;

function mainType(s: JsonSchema): string | undefined {
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  if (t === undefined && s.enum) return 'string';
  return t;
}

function kindOf(s: JsonSchema): FieldKind {
  const t = mainType(s);
  if (s.enum && (t === 'string' || t === 'number' || t === 'integer')) return 'enum';
  if (t === 'string' || t === 'number' || t === 'integer' || t === 'boolean') return t;
  return 'json';
}

export function schemaFields(schema: JsonSchema): SchemaField[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, s]) => ({
    name,
    kind: kindOf(s),
    required: required.has(name),
    description: s.description ?? s.title,
    options: (s.enum ?? []).map((v) => String(v)),
    enumValues: s.enum ?? [],
    hasDefault: s.default !== undefined,
  }));
}

/** Starting values: the schema's defaults where it has them. */
export function initialValues(schema: JsonSchema): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const f of schemaFields(schema)) {
    const d = schema.properties?.[f.name]?.default;
    if (f.kind === 'boolean') out[f.name] = d === true;
    else if (d === undefined) out[f.name] = '';
    else out[f.name] = f.kind === 'json' ? JSON.stringify(d, null, 2) : String(d);
  }
  return out;
}

/**
 * The arguments object, or per-field errors. Empty optional fields are left out; an optional checkbox is sent
 * only when ticked or when the schema has a default for it.
 */
export function toArguments(
  fields: SchemaField[],
  values: Record<string, FieldValue>,
): { args: Record<string, unknown>; errors: Record<string, string> } {
  const args: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'boolean') {
      if (v || f.required || f.hasDefault) args[f.name] = v === true;
      continue;
    }
    const text = String(v ?? '');
    if (text.trim() === '') {
      if (f.required) errors[f.name] = 'Required.';
      continue;
    }
    if (f.kind === 'number' || f.kind === 'integer') {
      const n = Number(text);
      if (!Number.isFinite(n)) errors[f.name] = 'Not a number.';
      else if (f.kind === 'integer' && !Number.isInteger(n)) errors[f.name] = 'Must be a whole number.';
      else args[f.name] = n;
    } else if (f.kind === 'json') {
      try {
        args[f.name] = JSON.parse(text);
      } catch (e) {
        errors[f.name] = `Invalid JSON: ${(e as Error).message}`;
      }
    } else if (f.kind === 'enum') {
      args[f.name] = f.enumValues[f.options.indexOf(text)];
    } else {
      args[f.name] = text;
    }
  }
  return { args, errors };
}
