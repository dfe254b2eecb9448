// What servers ask during the page's calls (docs/api.md, "What servers ask"), whoever holds the question (a chat's
// run, a "Try it" call): how a dialog sends its answer, and the URL-mode flows the user opened, which end when their
// server says so (`elicitation_complete` on GET /api/events).
import { SvelteSet } from 'svelte/reactivity';
import { reportError } from './toasts.svelte';
import type { RequestAnswer, ServerRequest } from './types';

/** A question as the page keeps it: `opened`, a URL-mode elicitation whose URL the user opened (its dialog waits). */
export type AskedRequest = ServerRequest & { opened?: boolean };

/** Sends the answer to a question; `wait`: the user opened its URL, so its dialog stays until the flow ends. */
export type Respond = (answer: RequestAnswer, wait?: boolean) => Promise<void>;

/** The answer a closed dialog gives: no. */
export function refusal(q: ServerRequest): RequestAnswer {
  return q.kind === 'elicitation' ? { action: 'cancel' } : { decision: 'deny' };
}

/** What the question asks of the user, in a few words (said in the call's block). */
export function asking(q: ServerRequest): string {
  if (q.kind === 'sampling') return 'asks to use the model';
  if (q.kind === 'sampling_result') return "asks to send the model's answer back";
  return q.params.mode === 'url' ? 'asks you to open a page' : 'asks you to fill in a form';
}

/** The host of `url`, or "" when it is not a web address (then it is not opened). */
export function webHost(url: string): string {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.host : '';
  } catch {
    return '';
  }
}

/** The URL-mode flows whose server announced them finished, by flowKey(). */
export const finishedFlows = new SvelteSet<string>();

export const flowKey = (server: string, elicitationId: string) => `${server}\n${elicitationId}`;

/**
 * One dialog's answer: sent once. While it is on its way the dialog stays; refused (the backend found the form
 * wrong: 400), it shows why and stays open for another try.
 */
export class Answering {
  busy = $state(false);
  error = $state('');
  #sent = false;
  /** Closed while an answer was on its way: the answer to give if that one is refused. */
  #closedWith: RequestAnswer | null = null;

  constructor(
    private readonly respond: Respond,
    private readonly dismiss: () => void,
  ) {}

  async send(answer: RequestAnswer, wait = false): Promise<void> {
    if (this.busy || this.#sent) return;
    this.busy = true;
    this.error = '';
    try {
      await this.respond(answer, wait);
      this.#sent = true;
    } catch (e) {
      if (this.#closedWith) this.respond(this.#closedWith).catch(reportError);
      else this.error = (e as Error).message;
    } finally {
      this.busy = false;
    }
  }

  /** The dialog was closed: unless it was answered, that means no. It goes either way. */
  close(no: RequestAnswer): void {
    if (this.busy) this.#closedWith = no;
    else if (!this.#sent) {
      this.#sent = true;
      this.respond(no).catch(reportError);
    }
    this.dismiss();
  }
}
