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
  | { toolsChanged: ToolDef[] };
