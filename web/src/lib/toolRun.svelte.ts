// A "Try it" call followed as it runs (POST /api/tools/call with "stream"): the server's progress, the task's status,
// its log messages and what it asks the user, then the result. Cancel closes the stream, which cancels the call on
// the server.
import { api, ApiError } from './api';
import type { AskedRequest } from './asks.svelte';
import { appendLog } from './logs';
import { reportError } from './toasts.svelte';
import { callToolStream, type CallEvents } from './streams';
import type { CallToolResult, LogMessage, RequestAnswer } from './types';

export class ToolRun {
  running = $state(false);
  /** When the call started (Unix ms), for the time it has taken so far. */
  startedAt = $state(0);
  progress: CallEvents['progress'] | null = $state(null);
  task: CallEvents['task'] | null = $state(null);
  logs: LogMessage[] = $state([]);
  result: CallToolResult | null = $state(null);
  failure = $state('');
  cancelled = $state(false);
  /** What the server asks during the call, oldest first (the dialog asks the first). */
  questions: AskedRequest[] = $state([]);
  #abort: AbortController | null = null;
  /** The call's id, as its stream names it first: answers to its questions name it. */
  #callId = '';

  constructor(
    readonly server: string,
    readonly tool: string,
  ) {}

  async start(args: Record<string, unknown>): Promise<void> {
    this.cancel();
    const abort = (this.#abort = new AbortController());
    this.running = true;
    this.startedAt = Date.now();
    this.progress = this.task = this.result = null;
    this.logs = [];
    this.failure = '';
    this.cancelled = false;
    this.questions = [];
    try {
      for await (const e of callToolStream(this.server, this.tool, args, abort.signal)) {
        if (e.event === 'call') this.#callId = e.data.id;
        else if (e.event === 'server_request') this.questions.push(e.data);
        else if (e.event === 'server_request_answered') this.#drop(e.data.requestId);
        else if (e.event === 'progress') this.progress = e.data;
        else if (e.event === 'task') this.task = e.data;
        else if (e.event === 'log') appendLog(this.logs, { ...e.data, timeMs: e.data.timeMs ?? Date.now() });
        else if (e.event === 'result') this.result = e.data;
        else if (e.event === 'error') this.failure = e.data.message;
      }
      if (!this.result && !this.failure && !abort.signal.aborted) this.failure = 'The call ended without a result.';
    } catch (e) {
      if (!abort.signal.aborted) this.failure = (e as Error).message;
    } finally {
      if (this.#abort === abort) {
        this.#abort = null;
        this.running = false;
        this.#endQuestions();
      }
    }
  }

  /**
   * Answers what the server asked. Refused (400: the form is wrong), it throws and the question stays open. `wait`:
   * the user opened its URL, so its dialog stays until the flow ends (dismiss).
   */
  async respond(q: AskedRequest, answer: RequestAnswer, wait = false): Promise<void> {
    if (wait) q.opened = true;
    try {
      await api.respondToCall(this.#callId, q.requestId, answer);
    } catch (e) {
      q.opened = false;
      if (!(e instanceof ApiError && e.status === 404)) throw e;
      // No longer open (the call ended): nothing to answer any more.
      this.dismiss(q);
      reportError(e);
      return;
    }
    if (!wait) this.dismiss(q);
  }

  /** Closes a question's dialog. */
  dismiss(q: AskedRequest): void {
    this.questions = this.questions.filter((x) => x.requestId !== q.requestId);
  }

  /** Answered or dropped (its dialog closes), unless it waits for the page the user opened. */
  #drop(requestId: string): void {
    this.questions = this.questions.filter((q) => q.opened || q.requestId !== requestId);
  }

  /** Stops a running call: the stream closes, and the host cancels the call on the server. */
  cancel(): void {
    if (!this.#abort) return;
    this.#abort.abort();
    this.#abort = null;
    this.running = false;
    this.cancelled = true;
    this.#endQuestions();
  }

  /** The call is over: nobody waits for the answers to its questions (a page the user opened may still be waited for). */
  #endQuestions(): void {
    this.questions = this.questions.filter((q) => q.opened);
  }
}
