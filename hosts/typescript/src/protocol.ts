// The lines of mcprt's sidecar protocol, `mcprt-session` version 1
// (docs/sidecar.md, docs/sidecar.schema.json in the repository).

/** The protocol name the hello carries. */
export const PROTOCOL = "mcprt-session";
/** The protocol version this client speaks. */
export const PROTOCOL_VERSION = 1;

/** A request id: any JSON value but null. The client uses numbers. */
export type RequestId = string | number | boolean | object;

/** An agent-facing tool to register with the model. */
export interface ToolDef {
  name: string;
  description: string;
  /** A JSON Schema object. */
  inputSchema: Record<string, unknown>;
}

/** The first line the runtime writes. */
export interface Hello {
  protocol: typeof PROTOCOL;
  version: number;
  /** The runtime's version. */
  runtime: string;
  /** `mcp`, `mcp_events` and the direct tools. */
  tools: ToolDef[];
}

/** An image a tool result passes to the model. */
export interface ToolImage {
  mimeType: string;
  /** base64 */
  data: string;
}

/** An agent-facing tool's result, exactly as a model would get it. */
export interface ToolResult {
  /** What the model reads. */
  text: string;
  /** The structured form for the host; on failure `details.error` is a stable code. */
  details?: Record<string, unknown>;
  isError?: boolean;
  images?: ToolImage[];
}

/** Something for the conversation (an events wakeup). */
export interface Delivery {
  /** `mcp-events` or `mcp-events-status`. */
  kind: string;
  text: string;
  details?: unknown;
  /** Start a model turn with `text` when true. */
  triggerTurn: boolean;
  /** How to queue it while the model is busy (`followUp`). */
  deliverAs: string;
}

/** Something for the user, never the model. */
export interface Notice {
  level: "info" | "warning" | "error";
  server?: string;
  text: string;
}

/** A field of an elicitation form (`runtime session --ask-host`). */
export interface AskField {
  name: string;
  kind: "string" | "number" | "integer" | "boolean" | "enum" | "multi";
  required: boolean;
  title?: string;
  description?: string;
  format?: string;
  options?: { value: string; title: string }[];
  default?: unknown;
}

/** A server's question for the host (docs/sidecar.md, "Questions for the host"). */
export type Ask =
  | { id: string; kind: "elicitation"; server: string; message: string; fields: AskField[] }
  | { id: string; kind: "url"; server: string; message: string; url: string; host: string }
  | { id: string; kind: "sampling"; server: string; messages: { role: string; text: string }[]; systemPrompt?: string; maxTokens: number };

/** The host's answer: an elicitation's or url's action, or a completion. */
export type AskAnswer =
  | { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> }
  | { text: string; model: string; stopReason?: string };

/** One server of a status snapshot. */
export interface ServerStatus {
  name: string;
  /** connected, connecting, cached, failed, needs-auth, not-connected or disabled */
  status: string;
  toolCount: number;
  resourceCount?: number;
  failedAgoSeconds?: number;
  disabled: boolean;
  lastError?: string;
}

/** The runtime's status (`runtime status --json`'s shape). */
export interface StatusSnapshot {
  version: number;
  servers: ServerStatus[];
  totalTools: number;
  totalResources: number;
  connectedCount: number;
  disabledCount: number;
}

/** A prompt a server offers. */
export interface PromptInfo {
  server: string;
  name: string;
  description?: string;
  arguments?: unknown;
}

/** A prompt's rendered messages. */
export interface PromptResult {
  description: string;
  messages: { role: string; text: string }[];
  /** The messages flattened into one text. */
  text: string;
}

/** What a `connect` tells of the server. */
export interface ConnectResult {
  server: string;
  name: string;
  version: string;
}

/** A resource of a server's catalog. */
export interface ResourceInfo {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  _meta?: Record<string, unknown>;
}

/** A resource template of a server's catalog. */
export interface TemplateInfo {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  _meta?: Record<string, unknown>;
}

/** One item of a read resource, as the server sent it. */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  /** base64 */
  blob?: string;
  _meta?: Record<string, unknown>;
}

/** An event of a subscription made with `subscribe` (for the host, not the model). */
export interface SubscriptionEvent {
  subscription: string;
  server: string;
  name: string;
  /** The server's eventId. */
  id: string;
  timestamp: string;
  /** Resumes after this event (subscribe's `cursor`). */
  cursor: string;
  data: unknown;
  replayTruncated?: true;
}

/** A state change of a subscription made with `subscribe`. */
export interface SubscriptionStatus {
  subscription: string;
  server: string;
  name: string;
  state: "opening" | "active" | "reconnecting" | "stopped" | "ended" | "failed";
  cursor: string;
  truncated?: true;
  error?: string;
  endReason?: string;
}

/** The typed API: each method's params and result. */
export interface Methods {
  status: { params: Record<string, never>; result: StatusSnapshot };
  servers: { params: Record<string, never>; result: string[] };
  tools: { params: Record<string, never>; result: ToolDef[] };
  connect: { params: { server: string; fresh?: boolean }; result: ConnectResult };
  prompts: { params: Record<string, never>; result: PromptInfo[] };
  getPrompt: {
    params: { server: string; name: string; arguments?: Record<string, string> };
    result: PromptResult;
  };
  callTool: {
    params: { server: string; tool: string; arguments?: Record<string, unknown> };
    result: { content: unknown[]; isError: boolean; structuredContent?: unknown };
  };
  serverTools: { params: { server: string }; result: Record<string, unknown>[] };
  serverResources: { params: { server: string }; result: ResourceInfo[] };
  serverTemplates: { params: { server: string }; result: TemplateInfo[] };
  serverPrompts: { params: { server: string }; result: (PromptInfo & { _meta?: Record<string, unknown> })[] };
  readResource: {
    params: { server: string; uri: string } | { server: string; template: string; arguments?: Record<string, unknown> };
    result: { contents: ResourceContents[] };
  };
  subscribe: {
    params: { server: string; event: string; arguments?: Record<string, unknown>; cursor?: string };
    result: { subscription: string; cursor: string };
  };
  unsubscribe: { params: { subscription: string }; result: { stopped: true } };
}

/** A method of the typed API. */
export type MethodName = keyof Methods;

/** The error member of an error line. */
export interface WireError {
  code: string;
  message: string;
}

/** One line the runtime writes, as parsed. */
export type OutputLine =
  | { hello: Hello }
  | { id: RequestId; result: unknown }
  | { id?: RequestId; error: WireError }
  | { deliver: Delivery }
  | { notice: Notice }
  | { status: StatusSnapshot }
  | { toolsChanged: ToolDef[] }
  | { event: SubscriptionEvent }
  | { subscriptionStatus: SubscriptionStatus };
