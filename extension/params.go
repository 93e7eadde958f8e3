package extension

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ReservedMetaPrefix marks the _meta keys MCP itself sets (protocol
// version, client capabilities and info, subscription ids, log level).
const ReservedMetaPrefix = "io.modelcontextprotocol/"

// ErrReservedMeta marks params that try to set a reserved _meta key.
var ErrReservedMeta = errors.New("extension: params set a reserved _meta key")

// ErrParams marks params that are not a JSON object.
var ErrParams = errors.New("extension: params must be a JSON object")

// CheckParams accepts empty params or a JSON object whose _meta (if any)
// sets no key MCP reserves: a companion cannot override the envelope the
// runtime adds, or a stream's correlation id.
func CheckParams(params json.RawMessage) error {
	trimmed := strings.TrimSpace(string(params))
	if trimmed == "" || trimmed == "null" {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(params, &fields) != nil || trimmed[0] != '{' {
		return ErrParams
	}
	raw, ok := fields["_meta"]
	if !ok {
		return nil
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(raw, &meta) != nil {
		return fmt.Errorf("%w: _meta must be an object", ErrParams)
	}
	for k := range meta {
		if strings.HasPrefix(k, ReservedMetaPrefix) || k == "progressToken" {
			return fmt.Errorf("%w (%q)", ErrReservedMeta, k)
		}
	}
	return nil
}
