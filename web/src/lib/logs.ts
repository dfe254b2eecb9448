// Server log messages (notifications/message) as the page keeps and shows them.
import type { LogLevel, LogMessage } from './types';

/** The levels a server may be asked for, least severe first (RFC 5424's, as MCP has them). */
export const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** How many messages are kept per server (as many as the host keeps). */
export const MAX_LOGS = 200;

/** A message's data as a line: a string as it is, anything else as compact JSON. */
export function logText(data: unknown): string {
  return typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data));
}

/** Appends `m`, dropping the oldest beyond MAX_LOGS. */
export function appendLog(list: LogMessage[], m: LogMessage): void {
  list.push(m);
  if (list.length > MAX_LOGS) list.splice(0, list.length - MAX_LOGS);
}

const same = (a: LogMessage, b: LogMessage) =>
  a.level === b.level && a.logger === b.logger && logText(a.data) === logText(b.data);

/**
 * The history a server gave, then the live messages that arrived while it was asked for: those the history already
 * ends with are left out (the longest run of them that it ends with).
 */
export function mergeLogs(history: LogMessage[], during: LogMessage[]): LogMessage[] {
  let overlap = Math.min(history.length, during.length);
  for (; overlap > 0; overlap--) {
    const tail = history.slice(history.length - overlap);
    if (tail.every((m, i) => same(m, during[i]))) break;
  }
  return [...history, ...during.slice(overlap)].slice(-MAX_LOGS);
}
