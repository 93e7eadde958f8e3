// Package clientside holds the decisions of the client side of MCP as pure
// code: what a server may ask of the client and how the answers are checked
// before they go back.
//
// # Elicitation
//
// A form-mode request's requestedSchema is read into a Form: the
// 2025-11-25 specification allows an object whose properties are
// primitives (string with optional length and format, number or integer
// with optional bounds, boolean) or enums (single-select untitled, titled
// through oneOf/const/title, the legacy enumNames, and multi-select arrays
// untitled or titled through items.anyOf). Anything else (nested objects,
// arrays of other things, references, unknown types) is refused with the
// property named, and the request is declined with that reason. An answer
// from the host is checked against the Form before it is sent, and
// defaults from the schema fill the fields the host left out (SEP-1034).
// A URL-mode request is accepted only for an absolute http or https URL
// without userinfo.
//
// Concurrency contract: nothing here runs by itself: no goroutines,
// channels, locks, contexts or clock reads. Every function is a pure
// function of its arguments.
package clientside
