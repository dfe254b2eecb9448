// The guides stay true to the tree and to the binary: every relative link in README.md and docs/ resolves (the file,
// and the heading an anchor names), every flag some `--help` prints is documented in a guide, and every `--help`
// ends with a guide that exists.
//   SWITCHBOARD_BIN=build/switchboard node --test tests/docs/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const guides = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

const fences = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;

// A Markdown file's text outside fenced code blocks and inline code spans (where brackets are no links).
function prose(text) {
  return text.replace(fences, '').replace(/`[^`\n]*`/g, '');
}

// GitHub's heading anchors: lower case, punctuation dropped (but - and _), spaces to -, repeats numbered.
function anchors(file) {
  const seen = new Map();
  const out = new Set();
  for (const line of readFileSync(file, 'utf8').replace(fences, '').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = m[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

function links(file) {
  const out = [];
  const text = prose(readFileSync(file, 'utf8'));
  for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]);
  for (const m of text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)) out.push(m[1]);
  return out;
}

test('every relative link in README.md and docs/ resolves', () => {
  const broken = [];
  let checked = 0;
  for (const guide of guides) {
    const file = join(root, guide);
    for (const link of links(file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http:, https:, mailto:
      checked++;
      const [path, anchor] = link.split('#', 2);
      const target = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
      if (!target.startsWith(root + '/') && target !== root) {
        broken.push(`${guide}: ${link} leaves the repository`);
      } else if (!existsSync(target)) {
        broken.push(`${guide}: ${link} (no ${relative(root, target)})`);
      } else if (anchor && target.endsWith('.md') && !anchors(target).has(anchor.toLowerCase())) {
        broken.push(`${guide}: ${link} (no heading #${anchor} in ${relative(root, target)})`);
      }
    }
  }
  assert.ok(checked > 20, `only ${checked} relative links found: is the link pattern still right?`);
  assert.deepEqual(broken, []);
});

test('the README stays short and starts with the two commands', () => {
  const text = readFileSync(join(root, 'README.md'), 'utf8');
  const lines = text.split('\n');
  assert.ok(lines.length <= 200, `README.md has ${lines.length} lines (200 at most: the rest belongs in docs/)`);
  const first = lines.findIndex((l) => l.startsWith('scripts/'));
  assert.match(lines[first], /^scripts\/run\b/);
  assert.match(lines[first + 1], /^scripts\/test\b/);
  assert.ok(first < 6, 'the two commands come first');
});

// Every subcommand's --help, depth first: [words, help text].
function helps(bin) {
  const out = [];
  const walk = (words) => {
    const text = execFileSync(bin, [...words, '--help'], { encoding: 'utf8' });
    out.push([words, text]);
    const section = /\nSubcommands:\n([\s\S]*?)(?:\n\n|$)/.exec(text);
    if (!section) return;
    for (const line of section[1].split('\n')) {
      const m = /^\s+([a-z][a-z-]*)\s/.exec(line);
      if (m) walk([...words, m[1]]);
    }
  };
  walk([]);
  return out;
}

test('every flag a --help prints is in a guide, and every --help names a guide', { skip: !process.env.SWITCHBOARD_BIN }, () => {
  const docs = guides.map((g) => readFileSync(join(root, g), 'utf8')).join('\n');
  const all = helps(process.env.SWITCHBOARD_BIN);
  assert.ok(all.length >= 20, `only ${all.length} --help pages found`);
  const undocumented = new Set();
  const unguided = [];
  for (const [words, text] of all) {
    const options = /\nOptions:\n([\s\S]*?)(?:\n\n|$)/.exec(text)?.[1] ?? '';
    for (const m of options.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
      const flag = `--${m[1]}`;
      if (flag === '--help') continue;
      if (!new RegExp(`(?<![\\w-])${flag}(?![\\w-])`).test(docs)) undocumented.add(`${flag} (switchboard ${words.join(' ')})`);
    }
    const guide = /More: (docs\/[\w.-]+\.md)/.exec(text)?.[1];
    if (!guide || !existsSync(join(root, guide))) unguided.push(`switchboard ${words.join(' ')} --help: ${guide ?? 'no guide named'}`);
  }
  assert.deepEqual([...undocumented], []);
  assert.deepEqual(unguided, []);
});
