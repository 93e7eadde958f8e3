package transports

import (
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// session is what a handshake fixed for the rest of a connection: the
// protocol version and, on 2026-07-28, the envelope every request carries.
type session struct {
	version string
	modern  bool
	http    bool // Streamable HTTP: requests also carry Mcp-Method/Mcp-Name
	client  mcp.Implementation
	// caps is the client capabilities object (Dialer.Capabilities).
	caps json.RawMessage
	// logLevel, on 2026-07-28, goes with every request
	// (io.modelcontextprotocol/logLevel), which replaces logging/setLevel;
	// without it the server sends no log messages.
	logLevel string
}

// metaKeyLogLevel is the 2026-07-28 request _meta key for the log level.
const metaKeyLogLevel = "io.modelcontextprotocol/logLevel"

// capabilities returns what the client declares: {} when the host gave no
// hooks.
func (s *session) capabilities() json.RawMessage {
	if len(s.caps) == 0 {
		return json.RawMessage(`{}`)
	}
	return s.caps
}

// modernCapabilities turns the 2025-11-25 capabilities object into its
// 2026-07-28 form: roots is an empty object (notifications/roots/list_changed
// is gone, so listChanged is not declared).
func modernCapabilities(caps json.RawMessage) json.RawMessage {
	fields := map[string]json.RawMessage{}
	if json.Unmarshal(caps, &fields) != nil {
		return caps
	}
	if _, ok := fields["roots"]; !ok {
		return caps
	}
	fields["roots"] = json.RawMessage(`{}`)
	out, _ := json.Marshal(fields)
	return out
}

// prepare returns the params and HTTP headers to send for a request. On
// legacy connections params go out untouched. On 2026-07-28 connections the
// _meta envelope (protocol version, client capabilities, client info) is
// merged into params, and over HTTP the standard headers are added, exactly
// as mcp-go does for its typed calls.
func (s *session) prepare(method string, params json.RawMessage) (json.RawMessage, http.Header, error) {
	if !s.modern {
		return params, nil, nil
	}
	fields := map[string]json.RawMessage{}
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &fields); err != nil {
			return nil, nil, errParamsNotObject
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := fields["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, nil, errParamsNotObject
		}
	}
	meta[mcp.MetaKeyProtocolVersion], _ = json.Marshal(s.version)
	meta[mcp.MetaKeyClientCapabilities] = s.capabilities()
	meta[mcp.MetaKeyClientInfo], _ = json.Marshal(s.client)
	if s.logLevel != "" {
		meta[metaKeyLogLevel], _ = json.Marshal(s.logLevel)
	}
	fields["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, nil, err
	}
	if !s.http {
		return out, nil, nil
	}
	var header http.Header
	if std := mcp.StandardHeaders(s.version, mcp.MCPMethod(method), out); len(std) > 0 {
		header = make(http.Header, len(std))
		for k, v := range std {
			header.Set(k, v)
		}
	}
	return out, header, nil
}
