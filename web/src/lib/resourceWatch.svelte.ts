// A watched resource (GET /api/resources/watch): subscribed while on, its contents sent again at every update.
import { watchResource } from './streams';
import type { ReadResourceResult } from './types';

export class ResourceWatch {
  on = $state(false);
  /** The latest contents the watch brought (the first ones once subscribed, then one per update). */
  contents: ReadResourceResult | null = $state(null);
  updates = $state(0);
  failure = $state('');
  #abort: AbortController | null = null;

  constructor(
    readonly server: string,
    readonly uri: string,
  ) {}

  async start(): Promise<void> {
    if (this.#abort) return;
    const abort = (this.#abort = new AbortController());
    this.on = true;
    this.failure = '';
    this.contents = null;
    this.updates = 0;
    let first = true;
    try {
      for await (const e of watchResource(this.server, this.uri, abort.signal)) {
        if (e.event === 'error') {
          this.failure = e.data.message;
          continue;
        }
        this.contents = e.data;
        if (!first) this.updates++;
        first = false;
      }
      // Ended by the other side: the gateway stopping, or the connection lost.
      if (!abort.signal.aborted) this.failure = 'The watch ended: Switchboard closed the stream.';
    } catch (e) {
      // A refusal (409: the server offers no subscriptions) or a lost connection; an abort is ours.
      if (!abort.signal.aborted) this.failure = (e as Error).message;
    } finally {
      if (this.#abort === abort) {
        this.#abort = null;
        this.on = false;
      }
    }
  }

  /** Ends the watch: the stream closes, which lets go of the subscription. */
  stop(): void {
    this.#abort?.abort();
    this.#abort = null;
    this.on = false;
  }
}
