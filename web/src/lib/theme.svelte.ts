// Light/dark: follows prefers-color-scheme until the user picks one, which is then remembered. One state for the
// top bar's toggle and the settings page, so that each shows what the other picked.
const KEY = 'switchboard.theme';
export type Theme = 'light' | 'dark';
export type ThemeChoice = Theme | 'system';

const systemDark = matchMedia('(prefers-color-scheme: dark)');

function stored(): ThemeChoice {
  const t = localStorage.getItem(KEY);
  return t === 'light' || t === 'dark' ? t : 'system';
}

export const theme = $state({ choice: stored(), systemDark: systemDark.matches });

// Following the system: the toggle's icon must change with it.
systemDark.addEventListener('change', (e) => (theme.systemDark = e.matches));

export function effectiveTheme(): Theme {
  if (theme.choice !== 'system') return theme.choice;
  return theme.systemDark ? 'dark' : 'light';
}

/** Pins the page to the choice (see app.css), or lets color-scheme follow the system. */
export function applyTheme(): void {
  if (theme.choice === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme.choice;
}

export function setTheme(choice: ThemeChoice): void {
  theme.choice = choice;
  if (choice === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, choice);
  applyTheme();
}
