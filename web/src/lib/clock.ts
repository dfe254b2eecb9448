// Wall-clock times as the page shows them: 24-hour, in the browser's time zone, whatever its locale.

const pad = (n: number) => String(n).padStart(2, '0');

/** "12:03:04" (or "12:03" without `seconds`) for a time in Unix milliseconds. */
export function clockTime(ms: number, seconds = true): string {
  const d = new Date(ms);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return seconds ? `${hm}:${pad(d.getSeconds())}` : hm;
}
