// RFC 6570 URI templates, as MCP resource templates use them: the variable names, and expansion (operators
// + # . / ; ? &, prefix `:N`; an explode `*` is treated as a plain variable since the form gives one string each).

const OPERATORS: Record<string, { first: string; sep: string; named: boolean; reserved: boolean }> = {
  '': { first: '', sep: ',', named: false, reserved: false },
  '+': { first: '', sep: ',', named: false, reserved: true },
  '#': { first: '#', sep: ',', named: false, reserved: true },
  '.': { first: '.', sep: '.', named: false, reserved: false },
  '/': { first: '/', sep: '/', named: false, reserved: false },
  ';': { first: ';', sep: ';', named: true, reserved: false },
  '?': { first: '?', sep: '&', named: true, reserved: false },
  '&': { first: '&', sep: '&', named: true, reserved: false },
};

const EXPRESSION = /\{([+#./;?&]?)([^}]*)\}/g;

function parseSpec(spec: string): { name: string; prefix?: number } {
  const m = /^([^:*]+)(?::(\d+)|\*)?$/.exec(spec.trim());
  return m ? { name: m[1], prefix: m[2] ? Number(m[2]) : undefined } : { name: spec.trim() };
}

/** The template's variables in order of first appearance; query ones (`{?q}`, `{&q}`) may be left empty. */
export function templateVariables(template: string): { name: string; required: boolean }[] {
  const vars: { name: string; required: boolean }[] = [];
  for (const [, op, specs] of template.matchAll(EXPRESSION))
    for (const spec of specs.split(',')) {
      const { name } = parseSpec(spec);
      if (name && !vars.some((v) => v.name === name)) vars.push({ name, required: op !== '?' && op !== '&' });
    }
  return vars;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function encode(value: string, allowReserved: boolean): string {
  let out = '';
  for (const ch of value) {
    if (UNRESERVED.test(ch) || (allowReserved && RESERVED.test(ch))) out += ch;
    else
      out += Array.from(new TextEncoder().encode(ch), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

/** Expands the template; a variable with an empty value is left out, as an undefined one would be. */
export function expandTemplate(template: string, values: Record<string, string>): string {
  return template.replace(EXPRESSION, (_, op: string, specs: string) => {
    const o = OPERATORS[op];
    const parts: string[] = [];
    for (const spec of specs.split(',')) {
      const { name, prefix } = parseSpec(spec);
      const raw = values[name];
      if (raw === undefined || raw === '') continue;
      const value = encode(prefix === undefined ? raw : [...raw].slice(0, prefix).join(''), o.reserved);
      parts.push(o.named ? `${name}=${value}` : value);
    }
    return parts.length ? o.first + parts.join(o.sep) : '';
  });
}
