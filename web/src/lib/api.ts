// The typed client of docs/api.md. Every request carries the stored token; a 401 asks for one and retries.
// Paths are relative ("api/..."), so the page also works behind a proxy that serves it under a prefix.
import { askForToken, getToken } from './auth.svelte';
import type {
  ApprovalDecision,
  CallToolResult,
  CatalogEntry,
  ChatSettings,
  CompleteResult,
  CompletionRef,
  ConversationDetail,
  ConversationSummary,
  GetPromptResult,
  Info,
  LlmSettings,
  LogLevel,
  LogMessage,
  PinKind,
  Pins,
  Prompt,
  ReadResourceResult,
  RegistryPlan,
  RegistryServer,
  RequestAnswer,
  Resource,
  ResourceTemplate,
  RootsSettings,
  ServerConfig,
  ServerStatus,
  Tool,
  ToolRef,
} from './types';

export type * from './types';

/** An error the API answered with (`{"error": {"status", "message"}}`) or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** fetch() with the token; on 401 waits for the user to give a token and tries again. */
export async function authorizedFetch(path: string, init: RequestInit = {}): Promise<Response> {
  for (;;) {
    const headers = new Headers(init.headers);
    const token = getToken();
    if (token) headers.set('Authorization', `Bearer ${token}`);
    let res: Response;
    try {
      res = await fetch(path, { ...init, headers });
    } catch (e) {
      if (init.signal?.aborted) throw e;
      throw new ApiError(0, `cannot reach Switchboard (${(e as Error).message})`);
    }
    if (res.status !== 401) return res;
    await askForToken();
  }
}

async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method };
  if (method === 'POST') {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body ?? {});
  }
  const res = await authorizedFetch(path, init);
  if (!res.ok) throw await errorOf(res, `${method} ${path}`);
  const text = await res.text();
  try {
    return (text ? JSON.parse(text) : {}) as T;
  } catch {
    throw new ApiError(res.status, `${method} ${path}: ${res.status} ${res.statusText} (not JSON)`);
  }
}

/**
 * An error body's message: `{"error": {"status", "message"}}`, or the JSON-RPC shape some gateways answer with
 * (`{"jsonrpc", "id", "error": {"code", "message"}}`). Both keep it in `error.message`; a bare string is taken too.
 */
function errorMessage(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return error || undefined;
  const message = (error as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' && message ? message : undefined;
}

/** The ApiError a failed answer stands for: its error message, else its status line. */
export async function errorOf(res: Response, what: string): Promise<ApiError> {
  let message: string | undefined;
  try {
    message = errorMessage(JSON.parse(await res.text()));
  } catch {
    // Not JSON: the status line says enough.
  }
  return new ApiError(res.status, message ?? `${what}: ${res.status} ${res.statusText}`);
}

const get = <T>(path: string) => request<T>('GET', path);
const post = <T>(path: string, body: unknown) => request<T>('POST', path, body);

type Servers = { servers: ServerStatus[] };

export interface RegistryRequest {
  name: string;
  version?: string;
  use?: string;
  as?: string;
  answers?: Record<string, string>;
  confine?: boolean;
}

export const api = {
  info: () => get<Info>('api/info'),
  servers: () => get<Servers>('api/servers'),
  restart: (name: string) => post<object>('api/servers/restart', { name }),
  logs: (name: string) =>
    get<{ server: string; level: LogLevel | null; logs: LogMessage[] }>(`api/servers/logs?name=${encodeURIComponent(name)}`),
  setLogLevel: (name: string, level: LogLevel) => post<ServerStatus>('api/servers/log-level', { name, level }),
  catalog: () => get<{ servers: CatalogEntry[] }>('api/catalog'),
  /** Starts a lazy server once and records what it offers (its items are then listed while it is dormant). */
  refreshCatalog: (name: string) => post<CatalogEntry>('api/catalog/refresh', { name }),
  /** Starts the server's OAuth login in the gateway: the authorization page to open (or loggedIn at once). */
  login: (name: string) => post<{ authorizationUrl?: string; loggedIn?: boolean }>('api/servers/login', { name }),
  enable: (name: string, enabled: boolean) => post<Servers>('api/servers/enable', { name, enabled }),
  save: (name: string, config: ServerConfig, previousName?: string) =>
    post<Servers & { warnings?: string[] }>('api/servers/save', { name, previousName, config }),
  remove: (name: string) => post<Servers>('api/servers/remove', { name }),
  /** Servers of the MCP Registry whose name matches `q`. */
  registrySearch: (q: string) =>
    get<{ registry: string; servers: RegistryServer[]; more: boolean }>(`api/registry/search?q=${encodeURIComponent(q)}`),
  /** A registry server made an entry with these answers (or the values it still needs). */
  registryPlan: (req: RegistryRequest) => post<RegistryPlan>('api/registry/plan', req),
  registryAdd: (req: RegistryRequest & { lazy?: boolean }) =>
    post<Servers & { warnings?: string[]; added: string[]; checked: string }>('api/registry/add', req),
  /** Adds every server of a pasted `.mcp.json` / VS Code `mcp.json` fragment (all or none). */
  importServers: (text: string) => post<Servers & { warnings?: string[]; added: string[] }>('api/servers/import', { text }),
  /** Adds a refused path (`allowWrite`) or domain (`allowedDomains`) to a stdio server's sandbox in the config file. */
  sandboxAllow: (name: string, kind: 'path' | 'domain', value: string) =>
    post<Servers & { warnings?: string[] }>('api/servers/sandbox/allow', { name, kind, value }),
  tools: () => get<{ tools: Tool[] }>('api/tools'),
  pins: () => get<Pins>('api/pins'),
  /** Approves the server's held definitions: all of them, or the one of `kind` `name`d. */
  approvePins: (server: string, held?: { kind: PinKind; name: string }) =>
    post<Pins>('api/pins/approve', { server, name: held?.name, kind: held?.kind }),
  callTool: (server: string, name: string, args: Record<string, unknown>) =>
    post<CallToolResult>('api/tools/call', { server, name, arguments: args }),
  resources: () => get<{ resources: Resource[]; templates: ResourceTemplate[] }>('api/resources'),
  /** A person's read asks the server; `cached`: what the page loads by itself may come from the host's cache. */
  readResource: (server: string, uri: string, cached = false) =>
    post<ReadResourceResult>('api/resources/read', { server, uri, cached }),
  prompts: () => get<{ prompts: Prompt[] }>('api/prompts'),
  getPrompt: (server: string, name: string, args: Record<string, string>) =>
    post<GetPromptResult>('api/prompts/get', { server, name, arguments: args }),
  complete: (server: string, ref: CompletionRef, name: string, value: string, context: Record<string, string>) =>
    post<CompleteResult>('api/complete', { server, ref, argument: { name, value }, context: { arguments: context } }),
  conversations: (q: string) =>
    get<{ conversations: ConversationSummary[] }>(`api/conversations${q ? `?q=${encodeURIComponent(q)}` : ''}`),
  conversation: (id: number) => get<ConversationDetail>(`api/conversations/get?id=${id}`),
  renameConversation: (id: number, title: string) =>
    post<{ conversation: ConversationSummary }>('api/conversations/rename', { id, title }),
  deleteConversation: (id: number) => post<object>('api/conversations/delete', { id }),
  /** The conversation as a file: the Markdown transcript or the whole JSON record. */
  exportConversation: async (id: number, format: 'markdown' | 'json') => {
    const res = await authorizedFetch(`api/conversations/export?id=${id}&format=${format}`);
    if (!res.ok) throw await errorOf(res, 'GET api/conversations/export');
    return res.blob();
  },
  conversationSettings: (id: number, serversOff: string[], toolsOff: ToolRef[]) =>
    post<{ settings: ChatSettings }>('api/conversations/settings', { id, serversOff, toolsOff }),
  approve: (conversationId: number, requestId: string, decision: ApprovalDecision) =>
    post<object>('api/chat/approve', { conversationId, requestId, decision }),
  /** An MCP App's tools/call in a conversation: its result, or the approval the user must give first (docs/api.md). */
  appTool: (conversationId: number, server: string, name: string, args: Record<string, unknown>, decision?: ApprovalDecision) =>
    post<{ result?: CallToolResult; approval?: { name: string; server: string; tool: string } }>('api/chat/app-tool', {
      conversationId,
      server,
      name,
      arguments: args,
      decision,
    }),
  /** The page's answer to what a server asked during the conversation's call (400: the form is wrong, still open). */
  respond: (conversationId: number, requestId: string, answer: RequestAnswer) =>
    post<object>('api/chat/respond', { conversationId, requestId, answer }),
  /** The same, for a "Try it" call (its stream's `call` id). */
  respondToCall: (callId: string, requestId: string, answer: RequestAnswer) =>
    post<object>('api/tools/respond', { callId, requestId, answer }),
  stopChat: (conversationId: number) => post<{ stopped: boolean }>('api/chat/stop', { conversationId }),
  models: () => get<{ models: string[] }>('api/models'),
  llmSettings: () => get<LlmSettings>('api/settings/llm'),
  setLlmSettings: (baseUrl: string, model: string) => post<LlmSettings>('api/settings/llm', { baseUrl, model }),
  roots: () => get<RootsSettings>('api/settings/roots'),
  setRoots: (roots: string[]) => post<RootsSettings>('api/settings/roots', { roots }),
};
