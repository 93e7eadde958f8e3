// Package auth is the client side of MCP authorization (OAuth 2.1, the
// MCP specification 2025-11-25 with its 2025-03-26 fallbacks): reading a
// 401 or 403 challenge, discovering the protected resource's metadata
// (RFC 9728) and its authorization server's (RFC 8414, OpenID Connect
// discovery), choosing a client (pre-registered, client ID metadata
// document, dynamic registration RFC 7591), running a grant (authorization
// code with PKCE S256, refresh, client credentials with a secret or
// private_key_jwt, and cross-app access: token exchange then jwt-bearer),
// choosing scopes and stepping up on insufficient_scope, and storing the
// tokens (OS keyring, process memory, or an encrypted file).
//
// Ownership: an Authorizer belongs to one server (a name and a resource
// URL). It owns that server's token and client registration in its Store
// and is the only code that talks to the server's authorization servers.
// Transport wraps an http.RoundTripper so that the bearer token goes only
// to the resource's origin and a 401 or 403 leads to authorization and one
// retry of that request.
//
// Concurrency: an Authorizer is safe for concurrent use. Authorization runs
// under one lock per Authorizer (single flight: requests that fail while a
// flow runs wait for it and retry with its token); reading the current
// token takes the same lock briefly. The Loopback receiver starts one
// goroutine for its HTTP listener and stops it before returning.
//
// Secrets (tokens, codes, verifiers, client secrets, assertions) never
// appear in errors, logs or String output: errors name the server, the
// endpoint and the HTTP status or OAuth error code only.
//
// Time comes from the injected clock; nothing here reads the wall clock.
package auth
