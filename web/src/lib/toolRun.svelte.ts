// A "Try it" call followed as it runs (POST /api/tools/call with "stream"): the server's progress, the task's status
// and its log messages, then the result. Cancel closes the stream, which cancels the call on the server.
import { appendLog } from './logs';
import { callToolStream, type CallEvents } from './streams';
import type { CallToolResult, LogMessage } from './types';

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
  #abort: AbortController | null = null;

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
    try {
      for await (const e of callToolStream(this.server, this.tool, args, abort.signal)) {
        if (e.event === 'progress') this.progress = e.data;
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
      }
    }
  }

  /** Stops a running call: the stream closes, and the host cancels the call on the server. */
  cancel(): void {
    if (!this.#abort) return;
    this.#abort.abort();
    this.#abort = null;
    this.running = false;
    this.cancelled = true;
  }
}
