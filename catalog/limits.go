package catalog

import (
	"encoding/json"
	"fmt"
)

// Catalog limits (seed 003): a server whose listing exceeds one of them has
// its catalog fail with a diagnostic naming the limit; other servers are
// not affected.
const (
	// MaxEntries bounds the tools, the prompts, and the resources plus
	// resource templates of one server.
	MaxEntries = 1000
	// MaxCursors bounds the pagination cursors of one listing.
	MaxCursors = 100
	// MaxMetadataBytes bounds the JSON of one catalog (tools, prompts, or
	// resources plus templates).
	MaxMetadataBytes = 2 << 20
	// MaxSchemaBytes bounds one input or output schema.
	MaxSchemaBytes = 64 << 10
	// MaxSchemaDepth bounds the nesting of one schema, literal data included.
	MaxSchemaDepth = 64
)

// LimitError says which catalog limit a server's listing exceeded.
type LimitError struct {
	// What is the catalog: "tools", "prompts" or "resources".
	What string
	// Message describes the limit, without any server content.
	Message string
}

func (e *LimitError) Error() string { return e.What + " catalog " + e.Message }

// CheckList checks one catalog's items (several lists for resources and
// their templates, which share the limits) against MaxEntries and
// MaxMetadataBytes; tools also have every schema checked.
func CheckList(what string, lists ...[]json.RawMessage) error {
	n, size := 0, 0
	for _, items := range lists {
		n += len(items)
		for _, it := range items {
			size += len(it)
		}
	}
	if n > MaxEntries {
		return &LimitError{What: what, Message: fmt.Sprintf("has %d entries, more than the limit of %d", n, MaxEntries)}
	}
	if size > MaxMetadataBytes {
		return &LimitError{What: what, Message: fmt.Sprintf("has %d bytes of metadata, more than the limit of %d (2 MiB)", size, MaxMetadataBytes)}
	}
	if what != "tools" {
		return nil
	}
	for _, items := range lists {
		for i, it := range items {
			var t struct {
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			}
			if json.Unmarshal(it, &t) != nil {
				continue
			}
			for _, s := range []struct {
				name string
				raw  json.RawMessage
			}{{"input", t.InputSchema}, {"output", t.OutputSchema}} {
				if err := CheckSchemaSize(s.raw); err != nil {
					return &LimitError{What: what, Message: fmt.Sprintf("entry %d: %s schema %s", i+1, s.name, err)}
				}
			}
		}
	}
	return nil
}

// schemaLimitError is a schema over MaxSchemaBytes or MaxSchemaDepth.
type schemaLimitError string

func (e schemaLimitError) Error() string { return string(e) }

// CheckSchemaSize checks one schema against MaxSchemaBytes and
// MaxSchemaDepth.
func CheckSchemaSize(raw json.RawMessage) error {
	if len(raw) > MaxSchemaBytes {
		return schemaLimitError(fmt.Sprintf("is %d bytes, more than the limit of %d (64 KiB)", len(raw), MaxSchemaBytes))
	}
	if d := jsonDepth(raw); d > MaxSchemaDepth {
		return schemaLimitError(fmt.Sprintf("nests %d levels deep, more than the limit of %d", d, MaxSchemaDepth))
	}
	return nil
}

// jsonDepth returns the deepest nesting of objects and arrays in raw,
// scanning bytes (strings skipped), without decoding.
func jsonDepth(raw []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
