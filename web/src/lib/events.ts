// GET /api/events, read with fetch (EventSource cannot send the token), reconnecting with backoff.
import { authorizedFetch } from './api';
import { SseParser, type SseEvent } from './sse';

export type LinkState = 'connecting' | 'live' | 'reconnecting';

export interface EventHandlers {
  onEvent(e: SseEvent): void;
  onState(state: LinkState, retryInMs?: number): void;
}

const MAX_DELAY_MS = 10_000;

/** Keeps the stream open until the returned function is called. */
export function connectEvents(handlers: EventHandlers): () => void {
  const abort = new AbortController();
  let delay = 1000;

  async function readOnce(): Promise<void> {
    const res = await authorizedFetch('api/events', {
      headers: { Accept: 'text/event-stream' },
      signal: abort.signal,
    });
    if (!res.ok || !res.body) throw new Error(`GET /api/events: ${res.status}`);
    handlers.onState('live');
    delay = 1000;
    const parser = new SseParser();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const e of parser.push(value)) handlers.onEvent(e);
    }
  }

  (async () => {
    handlers.onState('connecting');
    while (!abort.signal.aborted) {
      try {
        await readOnce();
      } catch (e) {
        if (abort.signal.aborted) return;
        console.warn('event stream:', e);
      }
      if (abort.signal.aborted) return;
      handlers.onState('reconnecting', delay);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  })();

  return () => abort.abort();
}
