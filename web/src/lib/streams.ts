// The API's event streams read with fetch (so that the token goes in a header): POST /api/tools/call with "stream"
// ("Try it": a call's progress, task status, log lines and what its server asks, then its result) and GET /api/resources/watch (a watched
// resource, sent again at every update). Closing either (the signal aborted, or the loop left) ends it on the
// server: the call is cancelled there, the subscription let go.
import { authorizedFetch, errorOf } from './api';
import { SseParser } from './sse';
import type { CallToolResult, LogMessage, ReadResourceResult, ServerRequest } from './types';

export interface CallEvents {
  /** First: the call's id, which answers to what the server asks name (POST /api/tools/respond). */
  call: { id: string };
  /** The server asks the user something during the call (docs/api.md, "What servers ask"). */
  server_request: ServerRequest;
  server_request_answered: { requestId: string };
  progress: { progress: number; total?: number; message?: string };
  task: { taskId: string; status: string; statusMessage?: string };
  log: LogMessage;
  result: CallToolResult;
  error: { status: number; message: string };
}
export type CallEvent = { [K in keyof CallEvents]: { event: K; data: CallEvents[K] } }[keyof CallEvents];

export interface WatchEvents {
  contents: ReadResourceResult;
  error: { message: string };
}
export type WatchEvent = { [K in keyof WatchEvents]: { event: K; data: WatchEvents[K] } }[keyof WatchEvents];

/** The events of a stream answered by `res`, parsed; a refusal throws its ApiError before any. */
export async function* sseEvents<E extends { event: string; data: unknown }>(res: Response, what: string): AsyncGenerator<E> {
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
          console.warn(`${what}: bad JSON in`, e);
          continue;
        }
        yield { event: e.event, data } as E;
      }
    }
  } finally {
    // Also when the caller stopped early: the connection must not stay open.
    reader.cancel().catch(() => {});
  }
}

/** Calls a tool and yields its events until the `result` (or `error`); aborting `signal` cancels the call. */
export async function* callToolStream(
  server: string,
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): AsyncGenerator<CallEvent> {
  const res = await authorizedFetch('api/tools/call', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({ server, name, arguments: args, stream: true }),
    signal,
  });
  yield* sseEvents<CallEvent>(res, 'POST api/tools/call');
}

/** Watches a resource: its contents now and after every update, until `signal` aborts. 409: no subscriptions. */
export async function* watchResource(server: string, uri: string, signal: AbortSignal): AsyncGenerator<WatchEvent> {
  const query = `server=${encodeURIComponent(server)}&uri=${encodeURIComponent(uri)}`;
  const res = await authorizedFetch(`api/resources/watch?${query}`, { headers: { Accept: 'text/event-stream' }, signal });
  yield* sseEvents<WatchEvent>(res, 'GET api/resources/watch');
}
