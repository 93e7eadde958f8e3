// Package jsonscan takes the members the runtime needs out of a JSON object
// without decoding it: Object finds the raw values of chosen top-level keys
// in one pass that also validates the whole input (ObjectOnly also refuses
// other keys, as a decoder with DisallowUnknownFields), Array splits an
// array into its elements, and String reads a JSON string. They serve the
// hot path of stream notifications (transports' line reader and router,
// eventstream's event frames), where each frame used to be decoded by
// encoding/json three times, and of tool calls (tools: the `mcp` tool's
// arguments and the tools/call result it renders). AppendString and
// AppendMarshalString write a JSON string by hand (append.go), exactly as
// encoding/json does without and with HTML escaping: the one writer each
// of eventstream, transports, tools and remote use.
//
// The contract is "the same as encoding/json, or not sure". Every result
// these functions give is exactly what json.Unmarshal would give for the
// same input into the caller's struct or map (checked by fuzz tests here
// and in each caller); whenever the input could be read differently by
// encoding/json (a key with an escape or a non-ASCII byte, a key equal to
// a wanted one but for case, a wanted key twice, invalid JSON, nesting
// over MaxDepth) they report false and the caller decodes with
// encoding/json instead. What they accept is always accepted by
// json.Valid.
//
// Concurrency contract: pure functions over the caller's bytes, which they
// never modify or keep; safe from any goroutine.
package jsonscan
