// POST /api/chat and /api/chat/continue, GET /api/chat/attach: the answer is a text/event-stream, read with fetch
// (like /api/events, so that the token goes in a header) and handed on event by event, parsed.
import { authorizedFetch } from './api';
import { sseEvents } from './streams';
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
 * with what the page needs to look as it did: `conversation`, the batches stored meanwhile, the answer so far as one
 * `reasoning` and one `content`, each call of the turn (started, its latest progress and task status, its log lines,
 * ended), the open questions. 409: not answering. It ends without `done` when a newer attach takes the run.
 */
export async function* attachStream(id: number): AsyncGenerator<ChatEvent> {
  const res = await authorizedFetch(`api/chat/attach?conversationId=${id}`, { headers: { Accept: 'text/event-stream' } });
  yield* events(res, 'GET api/chat/attach');
}

/** The events of a chat stream answered by `res`; a refusal throws its ApiError before any. */
function events(res: Response, what: string): AsyncGenerator<ChatEvent> {
  return sseEvents<ChatEvent>(res, what);
}
