// The chat page's state: the conversation list, the conversation shown, and the runs (a sent message being
// answered), each fed by its own event stream. A run outlives a switch to another conversation: its stream keeps
// being read, and its questions (approvals, and what its calls' servers ask) are still asked.
import { api, ApiError } from './api';
import type { AskedRequest } from './asks.svelte';
import { attachStream, chatStream } from './chat';
import { runOptions } from './settings.svelte';
import { reportError } from './toasts.svelte';
import { endedTool, findTool, toolName, type ToolView } from './transcript';
import type {
  ApprovalDecision,
  ApprovalRequest,
  Attachment,
  CallToolResult,
  ChatEvent,
  ChatSettings,
  ConversationDetail,
  ConversationSummary,
  GetPromptResult,
  RequestAnswer,
  StopReason,
  StoredMessage,
} from './types';

export interface Approval extends ApprovalRequest {
  /** The run asking; null for a question found waiting in a loaded conversation (another tab's run, say). */
  run: Run | null;
  conversationId: number;
  /** Asked for an MCP App's own tools/call (not the model's): where the answer goes (not to /api/chat/approve). */
  app?: (decision: ApprovalDecision) => void;
}

export interface Run {
  /** The conversation answering; 0 until the stream names it (a new conversation). */
  id: number;
  /** Its title, as the stream gave it (shown until the conversation is loaded). */
  title?: string;
  streaming: boolean;
  stopping: boolean;
  /** The message sent, shown until the stream hands it back stored. */
  user: { text: string; attachments: Attachment[] } | null;
  /** Messages the stream said are stored (the page also shows them before reloading the conversation). */
  stored: StoredMessage[];
  /** The assistant message being streamed. */
  content: string;
  reasoning: string;
  tools: ToolView[];
  /** Calls whose message is stored, with what the page saw of them and the store does not keep, by call id. */
  kept: Record<string, ToolView>;
  notices: string[];
  /** How the run ended; `error` also for a request refused. None for a stream that ended without saying. */
  outcome: { stop: StopReason; error?: string } | null;
}

/** What a server asks during a conversation's call (docs/api.md, "What servers ask"). */
export type ChatRequest = AskedRequest & {
  /** The run whose call it belongs to; null for one found waiting in a loaded conversation. */
  run: Run | null;
  conversationId: number;
};

/** The servers and tools switched off in one conversation. */
export type Switches = Pick<ChatSettings, 'serversOff' | 'toolsOff'>;

const allOn = (): Switches => ({ serversOff: [], toolsOff: [] });

export interface Draft {
  text: string;
  attachments: Attachment[];
  /** Said of what was put in (a prompt's assistant messages, what it had that cannot go): gone with the draft. */
  notes: string[];
}

export const emptyDraft = (): Draft => ({ text: '', attachments: [], notes: [] });

export const chat = $state({
  list: [] as ConversationSummary[],
  listLoaded: false,
  query: '',
  /** The conversation shown: 0 for a new one, which the first message creates. */
  id: 0,
  detail: null as ConversationDetail | null,
  loadError: '',
  runs: [] as Run[],
  /** Questions waiting for the user, oldest first (the dialog asks the first). */
  approvals: [] as Approval[],
  /** What the servers ask during the runs' calls, oldest first (asked after the approvals). */
  requests: [] as ChatRequest[],
  /** The message being written, the resources to send with it, and what the page says about them. */
  draft: emptyDraft(),
  /** The switches of the new conversation (shown as id 0), chosen before its first message, which takes them. */
  newSwitches: allOn(),
});

/** Adds a resource to the message being written, once (with its contents, when they are given). */
export function attach(a: Attachment): void {
  if (!chat.draft.attachments.some((b) => b.server === a.server && b.uri === a.uri))
    chat.draft.attachments.push({ server: a.server, uri: a.uri, contents: a.contents });
}

/**
 * Prompt `name` of `server` (its messages, `result`) as a draft, all of it: every text in order (an assistant's too,
 * which a note says), embedded resources and images as attachments that carry their contents, resource links as
 * attachments the server reads when the message is sent. Anything else (audio) cannot go: a note names it.
 */
export function promptDraft(server: string, name: string, result: GetPromptResult): Draft {
  const texts: string[] = [];
  const attachments: Attachment[] = [];
  const left: string[] = [];
  let fromAssistant = 0;
  let images = 0;
  for (const { role, content: c } of result.messages) {
    if (c.type === 'text') {
      texts.push(c.text);
      if (role === 'assistant') fromAssistant++;
    } else if (c.type === 'resource') {
      attachments.push({ server, uri: c.resource.uri, contents: [c.resource] });
    } else if (c.type === 'image') {
      const uri = `prompt://${server}/${name}/image-${++images}`;
      attachments.push({ server, uri, contents: [{ uri, mimeType: c.mimeType, blob: c.data }] });
    } else if (c.type === 'resource_link') {
      attachments.push({ server, uri: c.uri });
    } else {
      left.push(c.type === 'audio' ? `audio (${c.mimeType})` : (c as { type: string }).type);
    }
  }
  const notes: string[] = [];
  if (fromAssistant)
    notes.push(
      fromAssistant === 1
        ? "The prompt's assistant message went in as text: the model will read it as yours."
        : `The prompt's ${fromAssistant} assistant messages went in as text: the model will read them as yours.`,
    );
  if (left.length) notes.push(`Left out of the prompt (it cannot be attached): ${left.join(', ')}.`);
  return { text: texts.join('\n\n'), attachments, notes };
}

/** Adds `more` (a prompt's draft) to the message being written: its text after the text there, its attachments. */
export function addToDraft(more: Draft): void {
  const before = chat.draft.text.trimEnd();
  if (more.text) chat.draft.text = before ? `${before}\n\n${more.text}` : more.text;
  more.attachments.forEach(attach);
  chat.draft.notes.push(...more.notes);
}

/** The run of the conversation shown, if any. */
export function shownRun(): Run | undefined {
  return chat.runs.find((r) => r.id === chat.id);
}

let listTicket = 0;

export async function loadList(): Promise<void> {
  const ticket = ++listTicket;
  try {
    const { conversations } = await api.conversations(chat.query.trim());
    // Typing fast sends several searches: only the newest answer counts.
    if (ticket === listTicket) chat.list = conversations;
  } catch (e) {
    reportError(e);
  } finally {
    chat.listLoaded = true;
  }
}

/** Questions answered here (by kind, conversation and id): a conversation loaded meanwhile may still list them. */
const answered = new Set<string>();
const answerKey = (kind: 'approval' | 'request', id: number, requestId: string) => `${kind} ${id}/${requestId}`;

/** A question for the user, as the page keeps it: the run asking, or none (found waiting in a loaded conversation). */
interface Question {
  requestId: string;
  run: Run | null;
  conversationId: number;
  /** Asked by an app, not a run: not the loaded conversation's to drop. */
  app?: unknown;
  /** Answered, its dialog still open (a URL the user opened): not the loaded conversation's to drop. */
  opened?: boolean;
}

/**
 * `list` with the questions conversation `id`'s loaded run waits for (`pending`, each made a question by `make`), and
 * without those it no longer waits for (answered elsewhere meanwhile).
 */
function synced<Q extends Question, P extends { requestId: string }>(
  list: Q[],
  id: number,
  pending: P[],
  kind: 'approval' | 'request',
  make: (p: P) => Q,
): Q[] {
  const waiting = pending.filter((p) => !answered.has(answerKey(kind, id, p.requestId)));
  const stale = (q: Q) => !q.run && !q.app && !q.opened && q.conversationId === id && !waiting.some((p) => p.requestId === q.requestId);
  const out = list.filter((q) => !stale(q));
  for (const p of waiting) if (!out.some((q) => q.conversationId === id && q.requestId === p.requestId)) out.push(make(p));
  return out;
}

/**
 * Asks the questions a loaded conversation's run waits for (another tab's run, or this page's before a reload), and
 * drops those answered elsewhere meanwhile. A run streaming here asks its own.
 */
function syncPending(id: number, detail: ConversationDetail): void {
  if (chat.runs.some((r) => r.id === id && r.streaming)) return;
  chat.approvals = synced(chat.approvals, id, detail.pendingApprovals ?? [], 'approval', (p) => ({ ...p, run: null, conversationId: id }));
  chat.requests = synced(chat.requests, id, detail.pendingRequests ?? [], 'request', (p) => ({ ...p, run: null, conversationId: id }));
}

/**
 * Loads conversation `id`. `attach`: when it is answering with no stream here (this page before a reload, another
 * tab), take its run back to follow it live. Not when a stream here just ended: it was taken by a newer page, and
 * taking it back would only take it from that one.
 */
async function loadDetail(id: number, attach = false): Promise<void> {
  try {
    const detail = await api.conversation(id);
    if (chat.id !== id) return;
    chat.detail = detail;
    chat.loadError = '';
    if (attach && detail.running && !chat.runs.some((r) => r.id === id && r.streaming)) void attachRun(id);
    syncPending(id, detail);
  } catch (e) {
    if (chat.id === id) chat.loadError = (e as Error).message;
  }
}

/** Shows conversation `id` (0: a new one). The hash decides: the page calls this when it changes. */
export function show(id: number): void {
  if (id === chat.id && (id === 0 || chat.detail?.conversation.id === id)) return;
  chat.id = id;
  chat.loadError = '';
  // Found waiting in another conversation: no longer followed, so they could go stale.
  chat.approvals = chat.approvals.filter((a) => a.run || a.app || a.conversationId === id);
  chat.requests = chat.requests.filter((q) => q.run || q.opened || q.conversationId === id);
  if (chat.detail?.conversation.id !== id) chat.detail = null;
  if (id) void loadDetail(id, true);
}

export function reload(): Promise<void> {
  return chat.id ? loadDetail(chat.id) : Promise.resolve();
}

export const openConversation = (id: number) => (location.hash = id ? `#/chat/${id}` : '#/chat');

function newRun(id: number, user: Run['user']): Run {
  // Only one run per conversation: a finished one gives way (with its outcome) to the next, and hands on its forks.
  const kept = chat.runs.find((r) => r.id === id)?.kept ?? {};
  chat.runs = chat.runs.filter((r) => r.id !== id);
  chat.runs.push({ id, streaming: true, stopping: false, user, stored: [], content: '', reasoning: '', tools: [], kept, notices: [], outcome: null });
  // The proxy in the list, so that changes made through it are seen.
  return chat.runs[chat.runs.length - 1];
}

/** The call `id` of a run: streaming, or stored already (an agent's fork may still report on it). */
export function findCall(run: Run, id: string): ToolView | undefined {
  return findTool(run.tools, id) ?? findTool(Object.values(run.kept), id);
}

/** Where a call's events go: the conversation's tool list, or the steps of the agent call whose fork made it. */
function toolsOf(run: Run, parent: string | undefined): ToolView[] | undefined {
  if (!parent) return run.tools;
  const owner = findCall(run, parent);
  if (owner) owner.steps ??= [];
  return owner?.steps;
}

/** Before the run's streamed calls give way to the stored message: what the store does not keep of them stays. */
function keepLive(run: Run): void {
  for (const t of run.tools) if (t.steps || t.output || t.servers || t.logs) run.kept[t.id] = t;
}

/** The log lines a call's block keeps: a chatty server's oldest go. */
const LOG_LINES_KEPT = 200;

function onEvent(run: Run, e: ChatEvent): void {
  switch (e.event) {
    case 'conversation':
      run.title = e.data.title || run.title;
      if (!run.id) {
        run.id = e.data.id;
        // Its switches are now the conversation's: the next new one starts with everything on.
        chat.newSwitches = allOn();
        // The new conversation was on screen: it now has an address (and a place in the list).
        if (chat.id === 0) {
          chat.id = run.id;
          openConversation(run.id);
        }
        void loadList();
      }
      break;
    case 'content':
      // A fork's text is not the answer: it shows in its agent call's block.
      if (e.data.parent) {
        const owner = findCall(run, e.data.parent);
        if (owner) owner.output = (owner.output ?? '') + e.data.text;
      } else {
        run.content += e.data.text;
      }
      break;
    case 'reasoning':
      if (!e.data.parent) run.reasoning += e.data.text;
      break;
    case 'tool_start': {
      const { id, name, server } = e.data;
      toolsOf(run, e.data.parent)?.push({ id, name: toolName(name, server), server, arguments: e.data.arguments, status: 'running', content: null, startedAt: e.data.startedMs ?? Date.now(), traceId: e.data.traceId });
      break;
    }
    case 'tool_task': {
      const tool = findCall(run, e.data.id);
      if (tool) tool.task = { id: e.data.taskId, status: e.data.status, message: e.data.statusMessage };
      break;
    }
    case 'tool_progress': {
      const tool = findCall(run, e.data.id);
      if (tool) tool.progress = { progress: e.data.progress, total: e.data.total, message: e.data.message };
      break;
    }
    case 'tool_log': {
      const tool = findCall(run, e.data.id);
      if (!tool) break;
      const { level, logger, data } = e.data;
      tool.logs ??= [];
      tool.logs.push({ level, logger, data });
      if (tool.logs.length > LOG_LINES_KEPT) tool.logs.splice(0, tool.logs.length - LOG_LINES_KEPT);
      break;
    }
    case 'tool_end': {
      const d = e.data;
      const list = toolsOf(run, d.parent);
      if (!list) break;
      // The same view a reload makes of a fork's stored steps; a call seen starting keeps its name and arguments.
      const ended = endedTool(d);
      const tool = list.find((t) => t.id === d.id);
      if (tool) Object.assign(tool, { status: ended.status, ms: ended.ms, content: ended.content, structured: ended.structured, progress: undefined, traceId: ended.traceId ?? tool.traceId });
      else list.push(ended);
      break;
    }
    case 'fork_server': {
      // One line per server, each lifecycle once: "notes: loading → active → warm".
      const { parent, server, lifecycle, leases } = e.data;
      const owner = findCall(run, parent);
      if (!owner) break;
      owner.servers ??= [];
      let line = owner.servers.find((s) => s.server === server);
      if (!line) {
        owner.servers.push({ server, lifecycles: [] });
        line = owner.servers[owner.servers.length - 1];
      }
      if (line.lifecycles.at(-1) !== lifecycle) line.lifecycles.push(lifecycle);
      line.leases = leases;
      break;
    }
    case 'approval':
      // An attached stream asks again what may have been answered here just before.
      if (!answered.has(answerKey('approval', run.id, e.data.requestId))) chat.approvals.push({ ...e.data, run, conversationId: run.id });
      break;
    case 'approval_answered': {
      // Answered here or on another page: not to be asked (again); its dialog, if open, closes.
      const { requestId } = e.data;
      answered.add(answerKey('approval', run.id, requestId));
      chat.approvals = chat.approvals.filter((a) => !(a.conversationId === run.id && a.requestId === requestId));
      break;
    }
    case 'server_request': {
      // An attached stream asks again what is open, perhaps answered here just before, or shown here already.
      const { requestId } = e.data;
      const shown = chat.requests.some((q) => q.conversationId === run.id && q.requestId === requestId);
      if (!shown && !answered.has(answerKey('request', run.id, requestId))) chat.requests.push({ ...e.data, run, conversationId: run.id });
      break;
    }
    case 'server_request_answered': {
      // Answered here or on another page, or dropped (its call ended, Stop): its dialog closes, unless it waits for
      // the page the user opened. Closed for good, its id may name a new question later (a conversation reopened).
      const { requestId } = e.data;
      answered.delete(answerKey('request', run.id, requestId));
      chat.requests = chat.requests.filter((q) => q.opened || !(q.conversationId === run.id && q.requestId === requestId));
      break;
    }
    case 'notice':
      run.notices.push(e.data.text);
      break;
    case 'messages': {
      const batch = e.data.messages;
      run.stored.push(...batch);
      // What is stored replaces what was shown while it streamed.
      if (batch.some((m) => m.message.role === 'user')) run.user = null;
      if (batch.some((m) => m.message.role === 'assistant')) {
        keepLive(run);
        run.content = '';
        run.reasoning = '';
        run.tools = [];
      }
      break;
    }
    case 'done':
      run.outcome = { stop: e.data.stop, error: e.data.error };
      break;
  }
}

/** Reads one run's stream to its end. False when the request itself was refused (nothing was sent). */
async function follow(run: Run, stream: AsyncGenerator<ChatEvent>): Promise<boolean> {
  let started = false;
  try {
    for await (const e of stream) {
      started = true;
      onEvent(run, e);
    }
    // Ended without `done`: a newer stream (a page that attached) took the run, or the connection was cut. Not an
    // error either way: what is stored is the truth, and the reload below shows it (still answering, or not).
  } catch (e) {
    run.outcome = { stop: 'error', error: (e as Error).message };
  }
  run.stopping = false;
  chat.approvals = chat.approvals.filter((a) => a.run !== run);
  chat.requests = chat.requests.filter((q) => q.run !== run || q.opened);
  if (!started) {
    Object.assign(run, { streaming: false, user: null });
    return false;
  }
  // What is shown from now on is exactly what is stored (a stopped answer is, as far as it got). Still "streaming"
  // until then, so that the conversation does not look as if it were answering elsewhere meanwhile.
  if (run.id && chat.id === run.id) await loadDetail(run.id);
  keepLive(run);
  Object.assign(run, { streaming: false, user: null, stored: [], content: '', reasoning: '', tools: [] });
  void loadList();
  return true;
}

/** Sends a message in the conversation shown. False when it was refused (the caller keeps the draft). */
export function send(text: string, attachments: Attachment[]): Promise<boolean> {
  const id = chat.id;
  const run = newRun(id, { text, attachments });
  const appContext = appContexts[id];
  delete appContexts[id];
  const body = {
    conversationId: id || undefined,
    text,
    attachments: attachments.length ? attachments : undefined,
    settings: id ? undefined : chat.newSwitches,
    appContext,
    ...runOptions(),
  };
  return follow(run, chatStream('api/chat', body));
}

// MCP Apps in the conversation shown (AppFrame): what the last ui/update-model-context said, sent with the next
// message and then forgotten; ui/message sends the app's text as the user's next message when the user is using the
// app (into the draft while a run is under way, or when the app sends it unprompted, e.g. shown again on opening).
const appContexts: Record<number, string> = {};

export function setAppContext(text: string): void {
  appContexts[chat.id] = text;
}

/** Why an app in the conversation shown may not call `server`'s `tool`: switched off there (empty: it may). */
function appCallRefused(server: string, tool: string): string {
  const settings = chat.detail?.settings;
  if (settings?.serversOff.includes(server)) return `the server ${server} is switched off in this conversation`;
  if (settings?.toolsOff.some((t) => t.server === server && t.tool === tool))
    return `the tool ${tool} is switched off in this conversation`;
  return '';
}

let appQuestions = 0;

/**
 * An app's tools/call in the conversation shown: its switches and approvals hold as for the model's calls. A call they
 * do not allow waits for the user's answer (the approval dialog, saying the app asks); denied, the app gets an error.
 */
export async function appCallTool(server: string, tool: string, args: Record<string, unknown>): Promise<Omit<CallToolResult, 'durationMs'>> {
  const id = chat.id;
  const refused = id ? appCallRefused(server, tool) : 'the conversation is not saved yet';
  if (refused) return { content: [{ type: 'text', text: `Refused: ${refused}` }], isError: true };
  let r = await api.appTool(id, server, tool, args);
  if (r.approval) {
    const question = { requestId: `app-${++appQuestions}`, ...r.approval, arguments: JSON.stringify(args) };
    const decision = await new Promise<ApprovalDecision>((app) => chat.approvals.push({ ...question, run: null, conversationId: id, app }));
    r = await api.appTool(id, server, tool, args, decision);
  }
  return r.result ?? { content: [{ type: 'text', text: 'No result' }], isError: true };
}

export async function appMessage(text: string, interacting: boolean): Promise<void> {
  if (!interacting || shownRun()?.streaming) {
    chat.draft.text = text;
    return;
  }
  await send(text, []);
}

/** Follows the run of conversation `id`, answering with no stream here. */
async function attachRun(id: number): Promise<void> {
  const run = newRun(id, null);
  // The stream asks every open question again: those found waiting are asked by the run from now on.
  chat.approvals = chat.approvals.filter((a) => a.run || a.app || a.conversationId !== id);
  chat.requests = chat.requests.filter((q) => q.run || q.opened || q.conversationId !== id);
  if (await follow(run, attachStream(id))) return;
  // Refused (409: the run ended meanwhile): what it left is stored, nothing went wrong.
  chat.runs = chat.runs.filter((r) => r !== run);
  if (chat.id === id) await loadDetail(id);
}

/** After the turn limit: runs the loop again where it stopped. */
export function continueRun(): Promise<boolean> {
  const run = newRun(chat.id, null);
  return follow(run, chatStream('api/chat/continue', { conversationId: chat.id, ...runOptions() }));
}

/** Stops the conversation shown; its stream then ends by itself with `done` {stop: "cancelled"}. */
export async function stop(): Promise<void> {
  const run = shownRun();
  const id = run?.id || chat.id;
  if (!id) return;
  if (run?.streaming) run.stopping = true;
  try {
    await api.stopChat(id);
    // Answering elsewhere (another tab): no stream here will say when it ended, so look again.
    if (!run?.streaming) setTimeout(() => void reload(), 500);
  } catch (e) {
    if (run) run.stopping = false;
    reportError(e);
  }
}

export async function answer(approval: Approval, decision: ApprovalDecision): Promise<void> {
  // The dialog can report twice (a button, then its close event): the first answer counts.
  const id = approval.run?.id || approval.conversationId;
  const same = (a: Approval) => a.conversationId === approval.conversationId && a.requestId === approval.requestId;
  if (!chat.approvals.some(same)) return;
  chat.approvals = chat.approvals.filter((a) => !same(a));
  if (approval.app) return approval.app(decision);
  answered.add(answerKey('approval', id, approval.requestId));
  try {
    await api.approve(id, approval.requestId, decision);
  } catch (e) {
    reportError(e);
  }
}

/**
 * Answers what a server asked. Refused (400: the form is wrong), it throws and the question stays open. `wait`: the
 * user opened its URL, so its dialog stays until the flow ends (dropRequest).
 */
export async function respond(q: ChatRequest, answer: RequestAnswer, wait = false): Promise<void> {
  const id = q.run?.id || q.conversationId;
  // Before its stream says it was answered, which may come before this request's own answer.
  const key = answerKey('request', id, q.requestId);
  answered.add(key);
  if (wait) q.opened = true;
  try {
    await api.respond(id, q.requestId, answer);
  } catch (e) {
    answered.delete(key);
    q.opened = false;
    if (!(e instanceof ApiError && e.status === 404)) throw e;
    // No longer open (it timed out, its call ended): nothing to answer any more.
    dropRequest(q);
    reportError(e);
    return;
  }
  if (!wait) dropRequest(q);
}

/** Closes a question's dialog. */
export function dropRequest(q: ChatRequest): void {
  chat.requests = chat.requests.filter((r) => !(r.conversationId === q.conversationId && r.requestId === q.requestId));
}

/** The open question of call `callId` in the conversation shown, if any (its block says it waits on the user). */
export function requestOfCall(callId: string): ChatRequest | undefined {
  return chat.requests.find((q) => q.callId === callId && q.conversationId === chat.id && !q.opened);
}

/** Switches servers and tools off in the conversation shown (a new one keeps them for its first message). */
export async function setSwitches(switches: Switches): Promise<void> {
  const id = chat.id;
  if (!id) {
    chat.newSwitches = switches;
    return;
  }
  const { settings } = await api.conversationSettings(id, switches.serversOff, switches.toolsOff);
  if (chat.detail?.conversation.id === id) chat.detail.settings = settings;
}

export async function rename(id: number, title: string): Promise<void> {
  const { conversation } = await api.renameConversation(id, title);
  chat.list = chat.list.map((c) => (c.id === id ? conversation : c));
  if (chat.detail?.conversation.id === id) chat.detail.conversation = conversation;
}

export async function remove(id: number): Promise<void> {
  await api.deleteConversation(id);
  chat.list = chat.list.filter((c) => c.id !== id);
  chat.runs = chat.runs.filter((r) => r.id !== id || r.streaming);
  if (chat.id === id) openConversation(0);
}
