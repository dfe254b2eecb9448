// The API token: kept in localStorage, asked for with a dialog when the API answers 401.
const KEY = 'switchboard.token';

let waiting: Array<() => void> = [];

export const auth = $state({
  /** True while the token dialog is shown. */
  asking: false,
  /** Set when a stored token was refused, so the dialog can say so. */
  rejected: false,
  /** Whether a token is stored (the settings page shows it; the token itself stays out of the page's state). */
  stored: getToken() !== '',
});

export function getToken(): string {
  return localStorage.getItem(KEY) ?? '';
}

/** Opens the token dialog; resolves once a token is saved. Concurrent callers share one dialog. */
export function askForToken(): Promise<void> {
  auth.rejected = getToken() !== '';
  auth.asking = true;
  return new Promise((resolve) => waiting.push(resolve));
}

export function saveToken(token: string): void {
  if (token) localStorage.setItem(KEY, token);
  else localStorage.removeItem(KEY);
  auth.stored = token !== '';
  auth.asking = false;
  const resolve = waiting;
  waiting = [];
  for (const r of resolve) r();
}
