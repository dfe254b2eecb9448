// POST /api/chat and /api/chat/continue, GET /api/chat/attach: the answer is a text/event-stream, read with fetch
// (like /api/events, so that the token goes in a header) and handed on event by event, parsed.
import { authorizedFetch, errorOf } from './api';
import { SseParser } from './sse';
import type { ChatEvent } from './types';

/**
 * Posts `body` and yields the stream's events until it ends. A refused request (409: already answering, 400, ...)
 * throws its ApiError before any event. Leaving the loop early closes the stream, which stops the run
 * (5 s later, unless a page attaches).
 */
export async function* chatStream(path: 'api/chat' | 'api/chat/continue', body: unknown): AsyncGenerator<ChatEvent> {
  const res = await authorizedFetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(body),
  });
  yield* events(res, `POST ${path}`);
}

/**
 * Takes back the stream of the run answering in conversation `id` (a page that went away left it running). It starts
 * with what the page needs first: `conversation`, the answer so far as one `content`, the open questions. 409: not
 * answering. It ends without `done` when a newer attach takes the run.
 */
export async function* attachStream(id: number): AsyncGenerator<ChatEvent> {
  const res = await authorizedFetch(`api/chat/attach?conversationId=${id}`, { headers: { Accept: 'text/event-stream' } });
  yield* events(res, 'GET api/chat/attach');
}

/** The events of a stream answered by `res`; a refusal throws its ApiError before any. */
async function* events(res: Response, what: string): AsyncGenerator<ChatEvent> {
  if (!res.ok || !res.body) throw await errorOf(res, what);
  const parser = new SseParser();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const e of parser.push(value)) {
        let data: unknown;
        try {
          data = JSON.parse(e.data);
        } catch {
          console.warn('chat stream: bad JSON in', e);
          continue;
        }
        yield { event: e.event, data } as ChatEvent;
      }
    }
  } finally {
    // Also when the caller stopped early: the connection must not stay open.
    reader.cancel().catch(() => {});
  }
}
