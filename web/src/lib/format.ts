// Small display helpers.
import type { Annotations } from './types';

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  return m < 60 ? `${m} min ${Math.floor((ms % 60_000) / 1000)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Decoded size of a base64 string. */
export function base64Size(b64: string): number {
  const clean = b64.replace(/\s/g, '');
  return Math.floor((clean.length * 3) / 4) - (clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0);
}

export function dataUrl(mimeType: string | undefined, base64: string): string {
  return `data:${mimeType || 'application/octet-stream'};base64,${base64.replace(/\s/g, '')}`;
}

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** A tool call's arguments pretty-printed when they are JSON (the model writes a string), as they are otherwise. */
export function prettyArgs(args: unknown): string {
  if (typeof args !== 'string') return pretty(args ?? {});
  try {
    return pretty(JSON.parse(args || '{}'));
  } catch {
    return args;
  }
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * MCP annotations as short tags, each with what it means: who the content is for, how important the server says it
 * is, when it was last modified. What a server sent that is not of the spec's shape is left out.
 */
export function annotationTags(a: Annotations | undefined): { text: string; hint: string }[] {
  if (!a) return [];
  const tags: { text: string; hint: string }[] = [];
  if (Array.isArray(a.audience) && a.audience.length)
    tags.push({ text: `for: ${a.audience.join(', ')}`, hint: 'Who this is meant for' });
  if (typeof a.priority === 'number')
    tags.push({ text: `priority ${a.priority}`, hint: 'How important the server says this is: 0 optional, 1 required' });
  if (typeof a.lastModified === 'string' && a.lastModified) {
    const t = Date.parse(a.lastModified);
    tags.push({ text: `modified ${Number.isNaN(t) ? a.lastModified : new Date(t).toLocaleString()}`, hint: a.lastModified });
  }
  return tags;
}
