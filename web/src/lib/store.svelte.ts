// The app's shared state: servers kept live by /api/events, the tool/resource/prompt lists and the lazy servers'
// catalog entries and the definitions held until approved, fetched again whenever the stream says they changed, and the
// servers' log messages. The stream also says when a URL-mode question's flow is finished (lib/asks.svelte.ts).
import { api } from './api';
import { finishedFlows, flowKey } from './asks.svelte';
import { connectEvents, type LinkState } from './events';
import { appendLog, mergeLogs } from './logs';
import { reportError } from './toasts.svelte';
import type {
  CatalogEntry,
  HeldDefinition,
  Info,
  LogLevel,
  LogMessage,
  Pins,
  PinKind,
  Prompt,
  Resource,
  ResourceTemplate,
  ServerStatus,
  Tool,
} from './types';
import type { SseEvent } from './sse';

type ListKind = 'tools' | 'resources' | 'prompts' | 'catalog' | 'pins';

export const store = $state({
  info: null as Info | null,
  /** Server names in config order; `servers` holds their latest status. */
  order: [] as string[],
  servers: {} as Record<string, ServerStatus>,
  link: 'connecting' as LinkState,
  retryInMs: 0,
  tools: [] as Tool[],
  resources: [] as Resource[],
  templates: [] as ResourceTemplate[],
  prompts: [] as Prompt[],
  /** What the tool catalog holds for each lazy server, by name (what its dormant items are listed from). */
  catalog: {} as Record<string, CatalogEntry>,
  /** Each server's definitions held until a person approves them (not in the lists above), by server name. */
  held: {} as Record<string, HeldDefinition[]>,
  /** False until a list's first fetch has answered, so pages can tell "loading" from "none". */
  loaded: { tools: false, resources: false, prompts: false, catalog: false, pins: false } as Record<ListKind, boolean>,
  /** Each server's latest log messages, oldest first: its history once asked for, then the stream's `log` events. */
  logs: {} as Record<string, LogMessage[]>,
  /** Servers whose log history was fetched on this stream: a stream connected anew may have missed messages. */
  logsFetched: {} as Record<string, boolean>,
});

/** The whole server list (the stream's first event, or an answer to a change): every list may be stale. */
function setServers(list: ServerStatus[]): void {
  store.order = list.map((s) => s.name);
  store.servers = Object.fromEntries(list.map((s) => [s.name, s]));
  for (const kind of Object.keys(loaders) as ListKind[]) invalidate(kind);
}

/**
 * The server list a change answered with (save, enable, remove). It was taken when the change was made, and the
 * stream, on another connection, may already have brought newer phases: while the stream is live, only what the
 * change itself decides is taken from it (which servers, their order, entry and enabled flag).
 */
export function applyChange(list: ServerStatus[]): void {
  if (store.link !== 'live') return setServers(list);
  setServers(
    list.map((s) => {
      const seen = store.servers[s.name];
      return seen ? { ...seen, config: s.config, enabled: s.enabled, lazy: s.lazy } : s;
    }),
  );
}

function updateServer(s: ServerStatus): void {
  const before = store.servers[s.name];
  if (!store.order.includes(s.name)) store.order.push(s.name);
  store.servers[s.name] = s;
  // Counts or connectedness changed: the lists behind them may have too.
  if (!before || before.phase !== s.phase || before.tools !== s.tools) invalidate('tools');
  if (!before || before.phase !== s.phase || before.resources !== s.resources) invalidate('resources');
  if (!before || before.phase !== s.phase || before.prompts !== s.prompts) invalidate('prompts');
  if (!before || before.held !== s.held) invalidate('pins');
  // A lazy server back to dormant has run: the catalog recorded what it offered.
  if (s.lazy && before && before.lifecycle !== s.lifecycle && s.lifecycle === 'dormant') invalidate('catalog');
}

/** Starts a lazy server once to record what it offers (its items are then listed while it is dormant). */
export async function listLazyServer(name: string): Promise<void> {
  store.catalog[name] = await api.refreshCatalog(name);
}

/** The live messages of servers whose history is being fetched, to be merged with it. */
const arriving = new Map<string, LogMessage[]>();

function addLog(m: LogMessage & { server: string }): void {
  const line = { ...m, timeMs: m.timeMs ?? Date.now() };
  arriving.get(m.server)?.push(line);
  if (!store.logs[m.server]) store.logs[m.server] = [];
  appendLog(store.logs[m.server], line);
}

/** Fetches a server's log history (GET /api/servers/logs); the stream's `log` events follow it. */
export async function fetchLogs(name: string): Promise<void> {
  if (arriving.has(name)) return;
  arriving.set(name, []);
  try {
    const r = await api.logs(name);
    store.logs[name] = mergeLogs(r.logs, arriving.get(name) ?? []);
    store.logsFetched[name] = true;
  } catch (e) {
    reportError(e);
  } finally {
    arriving.delete(name);
  }
}

/** Asks the server for log messages from `level` up; throws the API's refusal (409: it offers no logging). */
export async function setLogLevel(name: string, level: LogLevel): Promise<void> {
  const s = await api.setLogLevel(name, level);
  const seen = store.servers[name];
  if (seen) seen.logLevel = s.logLevel;
}

function setHeld(pins: Pins): void {
  store.held = Object.fromEntries(pins.servers.map((s) => [s.server, s.held]));
}

/** Approves a server's held definitions (all, or the one given): they are offered again, and the lists follow. */
export async function approveHeld(server: string, held?: { kind: PinKind; name: string }): Promise<void> {
  setHeld(await api.approvePins(server, held));
}

const loaders: Record<ListKind, () => Promise<void>> = {
  tools: async () => {
    store.tools = (await api.tools()).tools;
  },
  resources: async () => {
    const r = await api.resources();
    store.resources = r.resources;
    store.templates = r.templates;
  },
  prompts: async () => {
    store.prompts = (await api.prompts()).prompts;
  },
  catalog: async () => {
    store.catalog = Object.fromEntries((await api.catalog()).servers.map((e) => [e.server, e]));
  },
  pins: async () => setHeld(await api.pins()),
};

const timers: Partial<Record<ListKind, ReturnType<typeof setTimeout>>> = {};

/** Refetches a list soon; a burst of events becomes one request. */
function invalidate(kind: ListKind): void {
  clearTimeout(timers[kind]);
  timers[kind] = setTimeout(() => void refresh(kind), 150);
}

export async function refresh(kind: ListKind): Promise<void> {
  try {
    await loaders[kind]();
  } catch (e) {
    reportError(e);
  } finally {
    store.loaded[kind] = true;
  }
}

function onEvent(e: SseEvent): void {
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch {
    console.warn('event stream: bad JSON in', e);
    return;
  }
  switch (e.event) {
    case 'servers':
      setServers((data as { servers: ServerStatus[] }).servers);
      store.logsFetched = {};
      break;
    case 'server':
      updateServer(data as ServerStatus);
      break;
    case 'tools':
    case 'resources':
    case 'prompts':
      invalidate(e.event);
      // A held definition changed again keeps the count the same: only the lists say so.
      invalidate('pins');
      break;
    case 'log':
      addLog(data as LogMessage & { server: string });
      break;
    case 'elicitation_complete': {
      // The flow a URL-mode question sent the user to is finished: its dialog closes.
      const { server, elicitationId } = data as { server: string; elicitationId: string };
      finishedFlows.add(flowKey(server, elicitationId));
      break;
    }
  }
}

/** Opens the event stream and loads every list; returns the function that closes the stream. */
export function start(): () => void {
  api.info().then((i) => (store.info = i), reportError);
  return connectEvents({
    onEvent,
    onState(state, retryInMs) {
      store.link = state;
      store.retryInMs = retryInMs ?? 0;
    },
  });
}
