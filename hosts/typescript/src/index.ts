// @mcprt/sidecar: a typed client for mcprt's sidecar protocol
// (`runtime session`, docs/sidecar.md).

export * from "./protocol.js";
export { Session, SidecarError, type SessionOptions, type CallOptions, type SessionEvents } from "./session.js";
export { LineSplitter } from "./lines.js";
