// The server form's fields, and their conversion to and from the `mcpServers` entry that /api/servers/save takes.
import type { ServerConfig, Transport } from './types';

/** Everything as the form's inputs hold it (text, one item a line, ...). */
export interface ServerFields {
  name: string;
  transport: Transport;
  command: string;
  args: string;
  env: string;
  cwd: string;
  url: string;
  headers: string;
  enabled: boolean;
  lazy: boolean;
  keepWarmSeconds: string;
  startupTimeoutMs: string;
  toolTimeoutMs: string;
  maxReconnectAttempts: string;
  allowedTools: string;
  excludedTools: string;
  /** A stdio server confined (`sandboxEnabled`): on for a new entry; an edited one shows what its entry says. */
  confine: boolean;
}

/** Keys the form edits; any other key of an edited entry (caFile, description, ...) is kept unchanged. */
const FORM_KEYS = new Set([
  'type', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'enabled', 'disabled', 'lazy', 'keepWarmSeconds',
  'startupTimeoutMs', 'toolTimeoutMs', 'maxReconnectAttempts', 'allowedTools', 'excludedTools', 'sandboxEnabled',
]);

const NUMBER_FIELDS = [
  { key: 'keepWarmSeconds', min: 0, integer: false },
  { key: 'startupTimeoutMs', min: 1, integer: true },
  { key: 'toolTimeoutMs', min: 1, integer: true },
  { key: 'maxReconnectAttempts', min: 0, integer: true },
] as const;

/** The transport Switchboard picks for a URL when the entry has no `type` (see the README). */
export function inferTransport(url: string): Transport {
  if (/^wss?:\/\//i.test(url)) return 'ws';
  if (/\/sse\/?$/i.test(url.split(/[?#]/)[0])) return 'sse';
  return 'http';
}

export function emptyFields(): ServerFields {
  return {
    name: '', transport: 'stdio', command: '', args: '', env: '', cwd: '', url: '', headers: '',
    enabled: true, lazy: false, keepWarmSeconds: '', startupTimeoutMs: '', toolTimeoutMs: '',
    maxReconnectAttempts: '', allowedTools: '', excludedTools: '', confine: true,
  };
}

const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));
const pairs = (map: Record<string, string> | undefined, sep: string) =>
  Object.entries(map ?? {}).map(([k, v]) => `${k}${sep}${v}`).join('\n');

export function fieldsFromConfig(name: string, c: ServerConfig): ServerFields {
  const transport = c.type ?? (c.url !== undefined && c.command === undefined ? inferTransport(c.url) : 'stdio');
  return {
    name,
    transport,
    command: str(c.command),
    args: (c.args ?? []).join('\n'),
    env: pairs(c.env, '='),
    cwd: str(c.cwd),
    url: str(c.url),
    headers: pairs(c.headers, ': '),
    enabled: c.enabled ?? !c.disabled,
    lazy: c.lazy ?? false,
    keepWarmSeconds: str(c.keepWarmSeconds),
    startupTimeoutMs: str(c.startupTimeoutMs),
    toolTimeoutMs: str(c.toolTimeoutMs),
    maxReconnectAttempts: str(c.maxReconnectAttempts),
    allowedTools: (c.allowedTools ?? []).join(', '),
    excludedTools: (c.excludedTools ?? []).join(', '),
    confine: c.sandboxEnabled === true,
  };
}

const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);
// Arguments keep their spaces: " x" may be meant.
const argLines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
const list = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);

function parsePairs(text: string, sep: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const i = line.indexOf(sep);
    out[line.slice(0, i).trim()] = line.slice(i + sep.length).trim();
  }
  return out;
}

/** Per-field messages; empty when the form can be sent. `taken` are the names other servers already use. */
export function validate(f: ServerFields, taken: string[]): Partial<Record<keyof ServerFields, string>> {
  const errors: Partial<Record<keyof ServerFields, string>> = {};
  const name = f.name.trim();
  if (!name) errors.name = 'A name is required.';
  else if (taken.includes(name)) errors.name = `A server named "${name}" already exists.`;
  if (f.transport === 'stdio') {
    if (!f.command.trim()) errors.command = 'A command is required for stdio.';
    if (lines(f.env).some((l) => !/^[^=\s][^=]*=/.test(l))) errors.env = 'Each line must be KEY=VALUE.';
  } else {
    const url = f.url.trim();
    const scheme = f.transport === 'ws' ? /^wss?:\/\/\S+$/i : /^https?:\/\/\S+$/i;
    if (!url) errors.url = 'A URL is required.';
    else if (!scheme.test(url))
      errors.url = f.transport === 'ws' ? 'The URL must start with ws:// or wss://.' : 'The URL must start with http:// or https://.';
    if (lines(f.headers).some((l) => !/^[^:\s][^:]*:/.test(l))) errors.headers = 'Each line must be Name: value.';
  }
  for (const { key, min, integer } of NUMBER_FIELDS) {
    const text = f[key].trim();
    if (!text) continue;
    const n = Number(text);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
      errors[key] = `Must be ${integer ? 'a whole number' : 'a number'} ≥ ${min}.`;
  }
  return errors;
}

/**
 * The entry to save: only what differs from the defaults (no `type` for stdio or when the URL implies it, no
 * empty lists), plus the keys of `base` (the entry being edited) that the form does not show.
 */
export function configFromFields(f: ServerFields, base: ServerConfig = {}): ServerConfig {
  const c: ServerConfig = {};
  for (const [k, v] of Object.entries(base)) if (!FORM_KEYS.has(k)) c[k] = v;
  if (f.transport === 'stdio') {
    c.command = f.command.trim();
    if (argLines(f.args).length) c.args = argLines(f.args);
    if (lines(f.env).length) c.env = parsePairs(f.env, '=');
    if (f.cwd.trim()) c.cwd = f.cwd.trim();
    // Said in the entry when asked for, or when turning off what the entry said; an entry without the key keeps
    // following the file's top-level switch.
    if (f.confine) c.sandboxEnabled = true;
    else if (base.sandboxEnabled !== undefined) c.sandboxEnabled = false;
  } else {
    c.url = f.url.trim();
    if (inferTransport(c.url) !== f.transport) c.type = f.transport;
    if (lines(f.headers).length) c.headers = parsePairs(f.headers, ':');
  }
  if (!f.enabled) c.enabled = false;
  if (f.lazy) c.lazy = true;
  for (const { key } of NUMBER_FIELDS) if (f[key].trim()) c[key] = Number(f[key]);
  if (list(f.allowedTools).length) c.allowedTools = list(f.allowedTools);
  if (list(f.excludedTools).length) c.excludedTools = list(f.excludedTools);
  return c;
}
