// Stored chat messages (the OpenAI shape) turned into what the page shows: user messages, and assistant messages
// with their tool calls, each joined to the `tool` message that answered it.
import type { Attachment, ChatEvents, ChatMessage, ChatPart, ContentBlock, ForkRecord, LogMessage, StoredMessage, ToolResult } from './types';

export type ToolStatus = 'running' | 'ok' | 'error' | 'denied';

export interface ToolView {
  id: string;
  /** The tool's own name (`add`), not the model's `demo__add`. */
  name: string;
  server: string;
  /** A JSON string (as the model wrote it) or the parsed object. */
  arguments: unknown;
  status: ToolStatus;
  ms?: number;
  /** The result; null while running, or when none was recorded. */
  content: ContentBlock[] | null;
  /** The result's structuredContent, when it has one. */
  structured?: unknown;
  /** The server's last progress report while it runs. */
  progress?: { progress?: number; total?: number; message?: string };
  /** A call answered with a task: its id and last status, and when the call started (Date.now()). */
  task?: { id: string; status: string; message?: string };
  startedAt?: number;
  /** The trace the call belongs to: `switchboard trace ID` prints its spans. */
  traceId?: string;
  /** What the call's server logged while it ran (not stored: shown while the page keeps it). */
  logs?: LogLine[];
  /**
   * An agent or skill call: what its fork does (its tool calls, its text) and the lazy servers it loads. The calls and
   * servers are stored with the call's result (`meta.fork`); the text only while the page keeps it.
   */
  steps?: ToolView[];
  output?: string;
  servers?: ForkServer[];
}

/** A log message of a call's server (a `tool_log` event). */
export type LogLine = Pick<LogMessage, 'level' | 'logger' | 'data'>;

/** A lazy server an agent's fork used, with each lifecycle it went through (`loading`, `active`, `warm`, ...). */
export interface ForkServer {
  server: string;
  lifecycles: string[];
  leases?: number;
}

export type Item =
  | { kind: 'user'; key: string; text: string; attachments: Attachment[] }
  | { kind: 'assistant'; key: string; content: string; reasoning: string; tools: ToolView[]; stopped?: boolean };

/** The call `id` among `tools` and, nested, their forks' steps. */
export function findTool(tools: ToolView[], id: string): ToolView | undefined {
  for (const t of tools) {
    if (t.id === id) return t;
    const inner = t.steps && findTool(t.steps, id);
    if (inner) return inner;
  }
  return undefined;
}

/** `demo__add` offered by `demo` is `add`. */
export function toolName(name: string, server: string): string {
  return name.startsWith(`${server}__`) ? name.slice(server.length + 2) : name;
}

/** A data: URL as an MCP image block; anything else as text. */
function imageBlock(url: string): ContentBlock {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { type: 'image', mimeType: m[1], data: m[2] } : { type: 'text', text: url };
}

/** Message content as MCP content blocks, so that ContentView can show it. */
export function contentBlocks(content: ChatMessage['content']): ContentBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p: ChatPart) =>
    p.type === 'text' ? { type: 'text', text: p.text } : p.type === 'image_url' ? imageBlock(p.image_url.url) : { type: 'text', text: JSON.stringify(p) },
  );
}

function plainText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/**
 * What the user typed: `meta.text` where the gateway keeps it. Else, with attachments, the content is a list: the
 * user's text first, then the attached resources' contents, which are shown as chips instead.
 */
function userText(m: StoredMessage): string {
  if (typeof m.meta.text === 'string') return m.meta.text;
  const c = m.message.content;
  if (!Array.isArray(c) || !m.meta.attachments?.length) return plainText(c);
  const first = c[0];
  return first?.type === 'text' ? first.text : '';
}

function statusOf(meta: StoredMessage['meta']): ToolStatus {
  return meta.denied ? 'denied' : (meta.isError ?? meta.result?.isError) ? 'error' : 'ok';
}

/** A finished call as its `tool_end` event reports it (live, or kept in an agent call's `meta.fork`). */
export function endedTool(d: ChatEvents['tool_end']): ToolView {
  const status = d.denied ? 'denied' : (d.isError ?? d.result?.isError) ? 'error' : 'ok';
  return { id: d.id, name: d.tool ?? toolName(d.name, d.server), server: d.server, arguments: d.arguments, status, ms: d.ms, traceId: d.traceId, ...resultView(d.result) };
}

/** A stored fork as the live view showed it: its calls nested, one line per lazy server. */
function forkView(fork: ForkRecord | undefined): Pick<ToolView, 'steps' | 'servers'> {
  if (!fork) return {};
  const steps = fork.steps?.length ? fork.steps.map(endedTool) : undefined;
  const servers = Object.entries(fork.servers ?? {}).map(([server, lifecycles]) => ({ server, lifecycles }));
  return { steps, servers: servers.length ? servers : undefined };
}

/** A tool's result as shown: its MCP result where there is one (images and all), else the text the model got. */
export function resultView(result: ToolResult | undefined, fallback: ChatMessage['content'] = null): Pick<ToolView, 'content' | 'structured'> {
  if (!result) return { content: contentBlocks(fallback) };
  return { content: result.content ?? [], structured: result.structuredContent };
}

/** Stored messages in order, as items. System messages are not shown. */
export function transcript(messages: StoredMessage[]): Item[] {
  const items: Item[] = [];
  /** Tool calls waiting for their result, by call id. */
  const open = new Map<string, ToolView>();
  for (const m of messages) {
    const msg = m.message;
    if (msg.role === 'user') {
      items.push({ kind: 'user', key: `m${m.id}`, text: userText(m), attachments: m.meta.attachments ?? [] });
    } else if (msg.role === 'assistant') {
      const tools = (msg.tool_calls ?? []).map((c): ToolView => {
        const server = c.function.name.includes('__') ? c.function.name.split('__')[0] : '';
        const view: ToolView = { id: c.id, name: toolName(c.function.name, server), server, arguments: c.function.arguments, status: 'error', content: null };
        open.set(c.id, view);
        return view;
      });
      const stopped = m.meta.cancelled === true;
      items.push({ kind: 'assistant', key: `m${m.id}`, content: plainText(msg.content), reasoning: msg.reasoning ?? '', tools, stopped });
    } else if (msg.role === 'tool') {
      let view = open.get(msg.tool_call_id ?? '');
      if (!view) {
        // A result whose call is not in the list: shown on its own.
        view = { id: msg.tool_call_id ?? `m${m.id}`, name: '', server: '', arguments: m.meta.arguments ?? {}, status: 'ok', content: null };
        items.push({ kind: 'assistant', key: `m${m.id}`, content: '', reasoning: '', tools: [view] });
      }
      open.delete(view.id);
      view.server = m.meta.server ?? view.server;
      view.name = m.meta.tool ?? toolName(msg.name ?? view.name, view.server);
      view.status = statusOf(m.meta);
      view.ms = m.meta.ms;
      view.traceId = m.meta.traceId;
      Object.assign(view, resultView(m.meta.result, msg.content), forkView(m.meta.fork));
    }
  }
  return items;
}

/**
 * Items with what the page kept of their calls as it saw them live (`kept`, by call id), which is not stored: the
 * log lines, an agent fork's text (and its steps and servers, of which a gateway before `meta.fork` stored nothing).
 */
export function withKept(items: Item[], kept: Record<string, ToolView>): Item[] {
  for (const item of items) {
    if (item.kind !== 'assistant') continue;
    for (const t of item.tools) {
      const k = kept[t.id];
      if (k) Object.assign(t, { steps: k.steps ?? t.steps, output: k.output, servers: k.servers ?? t.servers, logs: k.logs });
    }
  }
  return items;
}

/** Two lists of stored messages as one, each message once, in id order. */
export function mergeMessages(a: StoredMessage[], b: StoredMessage[]): StoredMessage[] {
  if (!b.length) return a;
  const seen = new Set(a.map((m) => m.id));
  return [...a, ...b.filter((m) => !seen.has(m.id))].sort((x, y) => x.id - y.id);
}
