// The chat's settings, kept in this browser: the model to answer with and the turn limit, sent with every message.
import { store } from './store.svelte';

const MODEL = 'switchboard.model';
const MAX_TURNS = 'switchboard.maxTurns';
export const MAX_TURNS_LIMITS = { min: 1, max: 1000, default: 25 };

export const validMaxTurns = (n: number) =>
  Number.isInteger(n) && n >= MAX_TURNS_LIMITS.min && n <= MAX_TURNS_LIMITS.max;

function storedMaxTurns(): number {
  const n = Number(localStorage.getItem(MAX_TURNS));
  return validMaxTurns(n) ? n : MAX_TURNS_LIMITS.default;
}

export const settings = $state({
  /** A model of GET /api/models, or "" for the configured one. */
  model: localStorage.getItem(MODEL) ?? '',
  maxTurns: storedMaxTurns(),
});

export function setModel(model: string): void {
  settings.model = model;
  if (model) localStorage.setItem(MODEL, model);
  else localStorage.removeItem(MODEL);
}

export function setMaxTurns(n: number): void {
  if (!validMaxTurns(n)) return;
  settings.maxTurns = n;
  localStorage.setItem(MAX_TURNS, String(n));
}

/**
 * The `model` and `maxTurns` of a chat request. "The configured model" is named too: a conversation keeps the model
 * it was last sent, so going back to the configured one must be said.
 */
export function runOptions(): { model?: string; maxTurns: number } {
  return { model: settings.model || store.info?.llm?.model || undefined, maxTurns: settings.maxTurns };
}
