// The shapes docs/api.md serves: MCP objects (camelCase, as in the MCP spec) plus Switchboard's additions.

export type Transport = 'stdio' | 'http' | 'sse' | 'ws';

export type Phase =
  | 'idle'
  | 'dormant'
  | 'starting'
  | 'initializing'
  | 'listing'
  | 'connected'
  | 'reconnecting'
  | 'error'
  | 'disconnected'
  | 'needs-auth'
  | 'disabled';

/** A server's entry as written under `mcpServers` (keys this UI does not edit are kept as they are). */
export interface ServerConfig {
  type?: Transport;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  enabled?: boolean;
  disabled?: boolean;
  lazy?: boolean;
  keepWarmSeconds?: number;
  startupTimeoutMs?: number;
  toolTimeoutMs?: number;
  maxReconnectAttempts?: number;
  allowedTools?: string[];
  excludedTools?: string[];
  [key: string]: unknown;
}

/** The confinement layer a stdio server runs under (`"sandboxEnabled": true` confines it). */
export type SandboxLayer = 'bwrap' | 'landlock' | 'container' | 'unconfined';

/** Something a confined server was refused lately: a domain (the egress proxy) or a path (seen on its stderr). */
export interface SandboxRefusal {
  kind: 'domain' | 'path';
  target: string;
  detail: string;
  atMs: number;
}

/** A stdio server's confinement as enforced (the plan's fields only when it runs confined). */
export interface SandboxStatus {
  layer: SandboxLayer | null;
  /** Why it cannot be confined here (it is then not started). */
  error?: string;
  /** The launcher profile applied ("npx", "uvx", "python", ...). */
  profile?: string | null;
  stateDir?: string;
  writable?: string[];
  hidden?: string[];
  readable?: string[];
  allowedDomains?: string[];
  deniedDomains?: string[];
  /** Why a preferred layer was not used. */
  fallback?: string;
  /** Newest last. */
  refusals: SandboxRefusal[];
}

export interface ServerStatus {
  name: string;
  transport: Transport;
  phase: Phase;
  enabled: boolean;
  lazy: boolean;
  lifecycle?: string;
  leases?: number;
  keepWarmSeconds?: number;
  timeInPhaseMs: number;
  phaseTimesMs: Record<string, number>;
  era: 'legacy' | 'modern' | null;
  protocolVersion: string | null;
  tools: number;
  resources: number;
  prompts: number;
  connectMs: number | null;
  reconnects: number;
  /** Why the connection was last lost, kept after it is back. */
  lastLost?: { cause: string; atMs: number } | null;
  /** The level the server is asked to send log messages from (POST /api/servers/log-level). */
  logLevel?: LogLevel | null;
  activeCalls: number;
  /** Definitions held until a person approves them (GET /api/pins says which). */
  held: number;
  error: string | null;
  stderrTail: string;
  /** null for remote servers; absent from an older gateway. */
  sandbox?: SandboxStatus | null;
  config: ServerConfig;
}

export type PinKind = 'tool' | 'prompt' | 'resourceTemplate';

/** A definition a server offers that differs from its pin, or is new since: not offered until approved. */
export interface HeldDefinition {
  kind: PinKind;
  name: string;
  /** The fields that differ ("description", "inputSchema", ...), or ["new"]. */
  changed: string[];
  digest: string;
  /** Absent for a new definition. */
  pinnedDigest?: string;
  /** What changed, in a sentence: `tool "echo" of server "demo" changed since it was approved (description)`. */
  description: string;
  /** The pinned and the served definition as pretty JSON, line by line: "- " only in the pin, "+ " only now, "  " both. */
  diff: string;
}

/** GET /api/pins, and the answer to approving. */
export interface Pins {
  lockfile: string | null;
  mode: 'off' | 'strict' | 'trust-on-first-use';
  servers: { server: string; held: HeldDefinition[]; pinned: number; known: boolean }[];
}

/** A JSON Schema, as far as the forms read it. */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [key: string]: unknown;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface Tool {
  server: string;
  enabled: boolean;
  /** A lazy server's, listed from the catalog while it does not run: using it starts the server for that use. */
  dormant?: boolean;
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  /** `_meta.ui.resourceUri`: the tool's MCP App (lib/apps.ts). */
  _meta?: Record<string, unknown>;
}

/** MCP annotations of a content block or a resource: hints for the client, shown as small tags. */
export interface Annotations {
  audience?: ('user' | 'assistant')[];
  /** 0 (entirely optional) to 1 (effectively required). */
  priority?: number;
  /** ISO 8601. */
  lastModified?: string;
}

export interface Resource {
  server: string;
  dormant?: boolean;
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Annotations;
  /** `_meta.ui` of an MCP App's view: used where the read contents carry none (components/AppFrame.svelte). */
  _meta?: Record<string, unknown>;
}

export interface ResourceTemplate {
  server: string;
  dormant?: boolean;
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Annotations;
}

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

export interface Prompt {
  server: string;
  dormant?: boolean;
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
}

/** One item of a ReadResourceResult (and of an embedded resource): text or base64 blob. */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: Record<string, unknown>;
}

export type ResourceLink = { type: 'resource_link'; uri: string; name: string; title?: string; description?: string; mimeType?: string };

export type ContentBlock = (
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | ResourceLink
  | { type: 'resource'; resource: ResourceContents }
) & { annotations?: Annotations };

export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  durationMs: number;
}

export interface ReadResourceResult {
  contents: ResourceContents[];
  /** Answered from the host's content cache (only for a read sent with `cached`), and how old it is. */
  fromCache?: boolean;
  ageMs?: number;
  /** When the server gave these contents. */
  readAtMs?: number;
}

export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** A server's log message (notifications/message): a `log` event's data, and an item of GET /api/servers/logs. */
export interface LogMessage {
  server?: string;
  level: LogLevel;
  logger?: string;
  data: unknown;
  timeMs?: number;
}

/** What the tool catalog holds for a lazy server (GET /api/catalog). */
export interface CatalogEntry {
  server: string;
  cached: boolean;
  current: boolean;
  updated?: number;
  tools?: number;
  resources?: number;
  templates?: number;
  prompts?: number;
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}

export interface GetPromptResult {
  description?: string;
  messages: PromptMessage[];
}

export type CompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

export interface CompleteResult {
  completion: { values: string[]; total?: number; hasMore?: boolean };
}

/** The config file's `llm` base URL and model as written (`${VAR}` kept), and what is in effect. */
export interface LlmSettings {
  baseUrl: string;
  model: string;
  effective: { configured: boolean; model: string; baseUrl: string };
}

/** The config's `roots` as written (`${VAR}` kept), and what a server asking `roots/list` is given. */
export interface RootsSettings {
  roots: string[];
  effective: { uri: string; name?: string }[];
}

export interface Info {
  version: string;
  configPath: string;
  tokenRequired: boolean;
  llm?: { configured: boolean; model?: string; baseUrl?: string };
}

// ---- chat (docs/api.md "Chat") ----

export interface ConversationSummary {
  id: number;
  title: string;
  model: string;
  createdMs: number;
  updatedMs: number;
  messageCount: number;
}

/** A part of a message's content, as the OpenAI chat shape has it. */
export type ChatPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A message as the model saw it (the OpenAI chat shape, plus what the store keeps). */
export interface ChatMessage {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string | ChatPart[] | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  name?: string;
  reasoning?: string;
}

export interface Attachment {
  server: string;
  uri: string;
  error?: string;
  /** Given whole (a prompt's embedded resource or image): sent as it is, not read. */
  contents?: ResourceContents[];
}

/** What a tool call returned (its MCP result), as a `tool_end` event and a stored tool message's meta have it. */
export interface ToolResult {
  content?: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * `meta` of a stored message: a tool result's server, tool, outcome and full MCP `result` (the message text is what
 * the model saw); a user message's attachments and `text` (what the user typed, without the attached contents).
 */
export interface MessageMeta {
  server?: string;
  tool?: string;
  isError?: boolean;
  denied?: boolean;
  ms?: number;
  /** The trace the call belongs to (`switchboard trace ID`). */
  traceId?: string;
  result?: ToolResult;
  attachments?: Attachment[];
  text?: string;
  /** An agent or skill call's result: what its fork did (its messages are not stored). */
  fork?: ForkRecord;
  [key: string]: unknown;
}

/** `meta.fork`: the fork's own calls (each a `tool_end` event's data) and each lazy server's lifecycles, in order. */
export interface ForkRecord {
  steps?: ChatEvents['tool_end'][];
  servers?: Record<string, string[]>;
}

export interface StoredMessage {
  id: number;
  createdMs: number;
  message: ChatMessage;
  meta: MessageMeta;
}

export interface ToolRef {
  server: string;
  tool: string;
}

export interface ChatSettings {
  serversOff: string[];
  toolsOff: ToolRef[];
  approvedTools: unknown[];
  approvedServers: string[];
}

/** A tool call waiting for the user's decision (an `approval` event's data). `parent`: asked from that call's fork. */
export interface ApprovalRequest {
  requestId: string;
  name: string;
  server: string;
  tool: string;
  arguments: string;
  parent?: string;
}

export interface ConversationDetail {
  conversation: ConversationSummary;
  messages: StoredMessage[];
  settings: ChatSettings;
  running: boolean;
  /** The questions its run waits for (answered from any client). */
  pendingApprovals?: ApprovalRequest[];
  /** What its servers ask while its run waits for the user. */
  pendingRequests?: ServerRequest[];
}

export type StopReason = 'done' | 'max_turns' | 'cancelled' | 'error';

/**
 * The events of a POST /api/chat (or /continue) stream, by name. `parent`: the event belongs to the fork of an agent
 * or skill call (that call's id), not to the conversation itself.
 */
export interface ChatEvents {
  conversation: { id: number; title?: string };
  content: { text: string; parent?: string };
  reasoning: { text: string; parent?: string };
  /** `startedMs`: when the call started (a page attaching later shows the time so far). */
  /** `traceId`: the trace the call belongs to (`switchboard trace ID`), when tracing is on. */
  tool_start: { id: string; name: string; server: string; arguments: string; startedMs?: number; parent?: string; traceId?: string };
  tool_progress: { id: string; progress?: number; total?: number; message?: string; parent?: string };
  /** A log message of the call's server while the call runs. */
  tool_log: LogMessage & { id: string; parent?: string };
  /** A call a server answered with a task (the Tasks extension): its status while Switchboard follows it. */
  tool_task: { id: string; taskId: string; status: string; statusMessage?: string; parent?: string };
  tool_end: {
    parent?: string;
    id: string;
    name: string;
    server: string;
    tool?: string;
    /** A JSON string, as in tool_start (older gateways sent the object). */
    arguments?: unknown;
    isError?: boolean;
    denied?: boolean;
    ms?: number;
    traceId?: string;
    result?: ToolResult;
  };
  approval: ApprovalRequest;
  /** Question `requestId` was answered (perhaps from another page): no longer to be asked. */
  approval_answered: { requestId: string; decision: ApprovalDecision };
  /** A server asks the user something during call `callId` (docs/api.md, "What servers ask"). */
  server_request: ServerRequest;
  /** Answered (perhaps on another page), or dropped: its dialog closes. */
  server_request_answered: { requestId: string };
  notice: { text: string; parent?: string };
  /** A lazy server the fork of call `parent` uses: loaded for it, and released when the fork ends. */
  fork_server: { parent: string; server: string; lifecycle: string; leases?: number };
  messages: { messages: StoredMessage[] };
  done: { stop: StopReason; error?: string; turns?: number };
}

export type ChatEvent = { [K in keyof ChatEvents]: { event: K; data: ChatEvents[K] } }[keyof ChatEvents];

export type ApprovalDecision = 'once' | 'tool' | 'server' | 'deny';

// ---- what servers ask during a page's call (docs/api.md "What servers ask") ----

/** elicitation/create's params: a form made from `requestedSchema`, or (mode "url") a URL for the user to open. */
export interface ElicitParams {
  message: string;
  mode?: 'form' | 'url';
  requestedSchema?: JsonSchema;
  url?: string;
  /** URL mode: names the flow, which `elicitation_complete` (GET /api/events) announces finished. */
  elicitationId?: string;
}

/** A part of a sampling message or of the model's answer (MCP's sampling content). */
export type SamplingContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'tool_use'; id?: string; name: string; input?: unknown }
  | { type: 'tool_result'; toolUseId?: string; content?: unknown };

export interface SamplingMessage {
  role: 'user' | 'assistant';
  content: SamplingContent | SamplingContent[];
}

/** sampling/createMessage's params, as far as the page shows them. */
export interface SamplingParams {
  messages: SamplingMessage[];
  systemPrompt?: string;
  maxTokens?: number;
  temperature?: number;
  includeContext?: string;
  modelPreferences?: { hints?: { name?: string }[] };
  /** Tools the server offers the model for this request. */
  tools?: { name: string; title?: string; description?: string; inputSchema?: JsonSchema }[];
}

/** The model's answer to a sampling request (a CreateMessageResult). */
export interface SamplingResult {
  role?: 'assistant' | 'user';
  content: SamplingContent | SamplingContent[];
  model?: string;
  stopReason?: string;
}

/** A server's question for the page (a `server_request` event's data): the call it belongs to, and what it asks. */
export type ServerRequest = {
  requestId: string;
  server: string;
  callId?: string;
  /** The agent call whose fork made call `callId`. */
  parent?: string;
} & (
  | { kind: 'elicitation'; params: ElicitParams }
  | { kind: 'sampling'; params: SamplingParams }
  | { kind: 'sampling_result'; params: SamplingParams; result: SamplingResult }
);

/** The page's answer to a ServerRequest, by its kind. */
export type ElicitAnswer = { action: 'accept'; content?: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };
export type SamplingDecision = { decision: 'once' | 'server' | 'deny' };
export type SamplingResultDecision = { decision: 'send' | 'deny' };
export type RequestAnswer = ElicitAnswer | SamplingDecision | SamplingResultDecision;

/** One server as the MCP Registry lists it (GET /api/registry/search). */
export interface RegistryServer {
  name: string;
  title: string;
  description: string;
  version: string;
  status: 'active' | 'deprecated' | 'deleted' | string;
  kinds: string;
  remote: boolean;
  local: boolean;
}

/** A value a registry server needs (an environment variable, a header, an argument, a {variable}). */
export interface RegistryQuestion {
  key: string;
  label: string;
  description: string;
  required: boolean;
  secret: boolean;
  format: string;
  default: string | null;
  choices: string[];
}

/** What POST /api/registry/plan answers: the ways to run it, the values it needs, and the entry (or why not yet). */
export interface RegistryPlan {
  registry: string;
  server: RegistryServer;
  repository: string;
  website: string;
  options: { use: string; label: string; ok: boolean; why?: string }[];
  use?: string;
  as: string;
  questions?: RegistryQuestion[];
  plan: { display: string; entry: ServerConfig; secrets: string[]; notes: string[] } | null;
  error: string | null;
}
