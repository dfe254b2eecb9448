// A stdio MCP server that misbehaves on demand, for scripts/soak: it runs the real server given on its command line
// and relays its stdin and stdout line by line; SIGUSR1 makes it print a line of garbage between two messages,
// SIGUSR2 a line bigger than the host's 64 MiB message limit. The soak kills (SIGKILL) and freezes (SIGSTOP) it
// directly; its server then sees its stdin close and exits.
//
//   node flaky_stdio.mjs SERVER [ARGS...]
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const huge = 65 * 1024 * 1024 + 17;
let pending = [];  // faults to print at the next line boundary
let partial = '';

function inject(kind) {
  if (kind === 'garbage') process.stdout.write('\u0000\u00ff{{not json at all ]] \u001b[31m\n');
  else process.stdout.write(Buffer.alloc(huge, 0x61).toString('latin1') + '\n');
}

child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  const text = partial + chunk;
  const end = text.lastIndexOf('\n');
  if (end < 0) {
    partial = text;
    return;
  }
  partial = text.slice(end + 1);
  process.stdout.write(text.slice(0, end + 1));
  for (const kind of pending.splice(0)) inject(kind);
});
process.on('SIGUSR1', () => pending.push('garbage'));
process.on('SIGUSR2', () => pending.push('huge'));
// Faults due while the server is quiet go out at once, still between two messages.
setInterval(() => {
  if (partial === '' && pending.length) for (const kind of pending.splice(0)) inject(kind);
}, 200).unref();

process.stdin.pipe(child.stdin);
process.stdin.on('end', () => child.stdin.end());
child.stdin.on('error', () => {});
process.stdout.on('error', () => process.exit(0));
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
