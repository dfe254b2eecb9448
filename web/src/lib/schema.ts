// A JSON Schema's properties as form fields (a tool's inputSchema, an elicitation's requestedSchema), and the form's
// values back as an object (the call's arguments, the elicitation's content).
import { plural } from './format';
import type { JsonSchema } from './types';

/** `enum`: one of a list (a select); `multi`: any of a list (checkboxes); `json`: anything else, as JSON text. */
export type FieldKind = 'string' | 'enum' | 'multi' | 'number' | 'integer' | 'boolean' | 'json';

/** The bounds a schema may set on a value (checked by limitErrors). */
export interface FieldLimits {
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

export interface SchemaField {
  name: string;
  kind: FieldKind;
  required: boolean;
  title?: string;
  description?: string;
  /** A string's format (`email`, `uri`, `date`, ...): the input's type, and checked by limitErrors. */
  format?: string;
  /** The choices of an `enum` or `multi` field as the inputs hold them (text), matching `enumValues` one to one. */
  options: string[];
  /** The choices as shown: the schema's titles for them (`oneOf` consts, `enumNames`), else the values. */
  labels: string[];
  /** The choices as the schema gives them. */
  enumValues: unknown[];
  hasDefault: boolean;
  limits: FieldLimits;
}

/** What an input binds: text, a number (null when empty) for number inputs, a boolean for checkboxes, a `multi`'s choices. */
export type FieldValue = string | number | boolean | null | string[];

type Choice = { const?: unknown; title?: string };

function mainType(s: JsonSchema): string | undefined {
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  if (t === undefined && (s.enum || s.oneOf)) return 'string';
  return t;
}

/** A schema's choices: `enum` (with the legacy `enumNames` as their titles) or `oneOf`/`anyOf` consts with titles. */
function choices(s: JsonSchema | undefined): { values: unknown[]; labels: string[] } | null {
  if (!s) return null;
  if (Array.isArray(s.enum)) {
    const names = Array.isArray(s.enumNames) ? (s.enumNames as unknown[]) : [];
    return { values: s.enum, labels: s.enum.map((v, i) => (typeof names[i] === 'string' ? (names[i] as string) : String(v))) };
  }
  const list = (s.oneOf ?? s.anyOf) as Choice[] | undefined;
  if (!Array.isArray(list) || !list.length || !list.every((c) => c && 'const' in c)) return null;
  return { values: list.map((c) => c.const), labels: list.map((c) => c.title ?? String(c.const)) };
}

const itemsOf = (s: JsonSchema) => (s.items && typeof s.items === 'object' ? (s.items as JsonSchema) : undefined);

function kindOf(s: JsonSchema): FieldKind {
  const t = mainType(s);
  if (choices(s) && (t === 'string' || t === 'number' || t === 'integer')) return 'enum';
  if (t === 'array' && choices(itemsOf(s))) return 'multi';
  if (t === 'string' || t === 'number' || t === 'integer' || t === 'boolean') return t;
  return 'json';
}

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);

export function schemaFields(schema: JsonSchema): SchemaField[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, s]) => {
    const kind = kindOf(s);
    const picks = (kind === 'multi' ? choices(itemsOf(s)) : choices(s)) ?? { values: [], labels: [] };
    return {
      name,
      kind,
      required: required.has(name),
      title: s.title,
      description: s.description,
      format: typeof s.format === 'string' ? s.format : undefined,
      options: picks.values.map((v) => String(v)),
      labels: picks.labels,
      enumValues: picks.values,
      hasDefault: s.default !== undefined,
      limits: {
        minimum: num(s.minimum),
        maximum: num(s.maximum),
        minLength: num(s.minLength),
        maxLength: num(s.maxLength),
        minItems: num(s.minItems),
        maxItems: num(s.maxItems),
      },
    };
  });
}

/** Starting values: the schema's defaults where it has them. */
export function initialValues(schema: JsonSchema): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const f of schemaFields(schema)) {
    const d = schema.properties?.[f.name]?.default;
    if (f.kind === 'boolean') out[f.name] = d === true;
    else if (f.kind === 'multi') out[f.name] = Array.isArray(d) ? d.map((v) => String(v)).filter((v) => f.options.includes(v)) : [];
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
    if (f.kind === 'multi') {
      const picked = Array.isArray(v) ? v : [];
      if (picked.length || f.hasDefault) args[f.name] = picked.map((p) => f.enumValues[f.options.indexOf(p)]);
      else if (f.required) errors[f.name] = 'Choose at least one.';
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

const FORMATS: Record<string, { valid: (s: string) => boolean; says: string }> = {
  email: { valid: (s) => /^[^\s@]+@[^\s@]+$/.test(s), says: 'Not an email address.' },
  uri: { valid: (s) => URL.canParse(s), says: 'Not a URL (with its scheme, as https://…).' },
  date: { valid: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)), says: 'Not a date (YYYY-MM-DD).' },
  'date-time': { valid: (s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)), says: 'Not a date and time (ISO 8601).' },
};

/** Per field, what breaks the bounds and formats the schema sets (of the values toArguments made). */
export function limitErrors(fields: SchemaField[], args: Record<string, unknown>): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = args[f.name];
    const { minimum, maximum, minLength, maxLength, minItems, maxItems } = f.limits;
    if (typeof v === 'number') {
      if (minimum !== undefined && v < minimum) errors[f.name] = `At least ${minimum}.`;
      else if (maximum !== undefined && v > maximum) errors[f.name] = `At most ${maximum}.`;
    } else if (typeof v === 'string' && f.kind === 'string') {
      const length = [...v].length;
      const format = f.format ? FORMATS[f.format] : undefined;
      if (minLength !== undefined && length < minLength) errors[f.name] = `At least ${plural(minLength, 'character')}.`;
      else if (maxLength !== undefined && length > maxLength) errors[f.name] = `At most ${plural(maxLength, 'character')}.`;
      else if (format && !format.valid(v)) errors[f.name] = format.says;
    } else if (Array.isArray(v)) {
      if (minItems !== undefined && v.length < minItems) errors[f.name] = `Choose at least ${minItems}.`;
      else if (maxItems !== undefined && v.length > maxItems) errors[f.name] = `Choose at most ${maxItems}.`;
    }
  }
  return errors;
}
