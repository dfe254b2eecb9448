// Confined stdio servers on the servers page: what each one's sandbox allows, what it refused lately, and "Allow",
// which adds a refused path or domain to the server's entry in the config file (the server restarts with it).
// A refusal comes with the event stream (the server's status sent again); the page also asks when it opens, and
// the section's refresh button asks at once.
import { api } from './api';
import { applyChange, store } from './store.svelte';
import type { SandboxRefusal, SandboxStatus, ServerStatus } from './types';

/** How the page says a server is not confined, and how to confine it. */
export const UNCONFINED_HINT =
  'Not confined: this server runs with all of your user\'s access (files, network, other processes). ' +
  'Add "sandboxEnabled": true to its entry in the config file (or at the top level, for every stdio server) ' +
  'to confine it.';

/** The sandbox status of every server, asked for again. */
export async function refreshSandboxes(): Promise<void> {
  takeSandboxes((await api.servers()).servers);
}

function takeSandboxes(list: ServerStatus[]): void {
  for (const s of list) {
    const seen = store.servers[s.name];
    if (seen) seen.sandbox = s.sandbox ?? null;
  }
}

/** Allows what `refusal` was refused, in `server`'s entry; the warnings the edit gave, if any. */
export async function allowRefused(server: string, refusal: Pick<SandboxRefusal, 'kind' | 'target'>): Promise<string[]> {
  const r = await api.sandboxAllow(server, refusal.kind, refusal.target);
  applyChange(r.servers);
  takeSandboxes(r.servers);
  // The server restarts with its new policy: its status then comes with the stream's events; asked once more here
  // in case they came before this answer.
  await refreshSandboxes();
  return r.warnings ?? [];
}

/** Whether what `refusal` was refused is allowed by now (the server restarted with it). */
export function isAllowed(sandbox: SandboxStatus, refusal: SandboxRefusal, config: ServerStatus['config']): boolean {
  if (refusal.kind === 'domain') {
    if (sandbox.allowedDomains?.includes(refusal.target)) return true;
    return stringsAt(config, ['sandbox', 'network', 'allowedDomains']).includes(refusal.target);
  }
  if (sandbox.writable?.includes(refusal.target)) return true;
  return stringsAt(config, ['sandbox', 'filesystem', 'allowWrite']).includes(refusal.target);
}

/** The strings of the list at `path` in an entry as written ([] when there is none). */
function stringsAt(entry: unknown, path: string[]): string[] {
  let v: unknown = entry;
  for (const key of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** The badge's tone and its explanation for a layer. */
export function layerBadge(sandbox: SandboxStatus): { word: string; tone: string; title: string } {
  switch (sandbox.layer) {
    case 'bwrap':
      return {
        word: 'bwrap',
        tone: 'green',
        title: 'Confined by bubblewrap and a seccomp filter: its own namespaces, the file system read-only but for ' +
          'what is listed, the network only through Switchboard\'s proxy.',
      };
    case 'landlock':
      return {
        word: 'landlock',
        tone: 'green',
        title: 'Confined by Landlock and a seccomp filter (namespaces are not available here): writes only where ' +
          'listed, the network only through Switchboard\'s proxy.',
      };
    case 'container':
      return { word: 'container', tone: 'blue', title: 'A docker or podman command: the container is its sandbox.' };
    case 'unconfined':
      return { word: 'unconfined', tone: 'amber', title: UNCONFINED_HINT };
    default:
      return { word: 'not confined', tone: 'red', title: sandbox.error ?? 'It cannot be confined here.' };
  }
}
