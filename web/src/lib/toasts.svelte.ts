// Transient messages in a corner of the page. Errors stay until dismissed: they must not go unseen.
export interface Toast {
  id: number;
  kind: 'error' | 'info';
  text: string;
}

export const toasts: Toast[] = $state([]);
let next = 1;

export function dismiss(id: number): void {
  const i = toasts.findIndex((t) => t.id === id);
  if (i >= 0) toasts.splice(i, 1);
}

export function notify(text: string, kind: Toast['kind'] = 'info'): void {
  const id = next++;
  toasts.push({ id, kind, text });
  if (kind === 'info') setTimeout(() => dismiss(id), 4000);
}

/** Shows any thrown value as an error toast. */
export function reportError(e: unknown): void {
  notify(e instanceof Error ? e.message : String(e), 'error');
}
