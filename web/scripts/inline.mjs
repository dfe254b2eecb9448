// Folds Vite's output into one self-contained dist/index.html (the C++ binary embeds it and serves nothing else),
// then writes dist/index.html.gz next to it. Node built-ins only.
import { readFileSync, writeFileSync, rmSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, constants } from 'node:zlib';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const htmlPath = join(dist, 'index.html');
let html = readFileSync(htmlPath, 'utf8');
const inlined = new Set();

function asset(ref) {
  const name = ref.replace(/^\.?\//, '');
  inlined.add(name);
  return readFileSync(join(dist, name), 'utf8');
}

// Replacement functions, not strings: bundled code is full of `$&`-like sequences.
html = html.replace(/<script\b[^>]*\bsrc="([^"]+)"[^>]*><\/script>/g, (_, src) => {
  // "</script" inside the code would end the element early.
  const code = asset(src).replace(/<\/(script)/gi, '<\\/$1');
  return `<script type="module">${code}</script>`;
});
html = html.replace(/<link\b[^>]*\brel="stylesheet"[^>]*\bhref="([^"]+)"[^>]*>/g, (_, href) => {
  const css = asset(href).replace(/<\/(style)/gi, '<\\/$1');
  return `<style>${css}</style>`;
});

const leftover = html.match(/<(?:script|link)\b[^>]*\b(?:src|href)="(?!data:)[^"]*"/);
if (leftover) throw new Error(`not inlined: ${leftover[0]}`);

writeFileSync(htmlPath, html);
for (const name of inlined) rmSync(join(dist, name));
const gz = gzipSync(html, { level: constants.Z_BEST_COMPRESSION });
writeFileSync(`${htmlPath}.gz`, gz);

const extra = readdirSync(dist).filter((f) => f !== 'index.html' && f !== 'index.html.gz');
if (extra.length) throw new Error(`unexpected files in dist/: ${extra.join(', ')}`);

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`dist/index.html     ${kib(Buffer.byteLength(html))} (${Buffer.byteLength(html)} bytes)`);
console.log(`dist/index.html.gz  ${kib(gz.length)} (${gz.length} bytes)`);
