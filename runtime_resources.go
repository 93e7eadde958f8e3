package mcprt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"

	"github.com/mcprt/mcprt/messages"
)

// MaxResourceItems bounds the items of a resource read (seed 003): a
// server that sends more fails the read.
const MaxResourceItems = 100

// ResourceContents is one item of a read resource.
type ResourceContents struct {
	// URI is the item's URI (a read may return several, for example a
	// directory's files).
	URI      string
	MIMEType string
	// Text is a text item's text; Data a blob item's bytes (decoded from
	// base64). Exactly one of them is set for a well-formed item.
	Text string
	Data []byte
	// Meta is the item's _meta (a JSON object, or nil).
	Meta json.RawMessage
	// Raw is the item as the server sent it.
	Raw json.RawMessage
}

// ReadResult is a read resource.
type ReadResult struct {
	Contents []ResourceContents
	// Meta is the result's _meta (a JSON object, or nil).
	Meta json.RawMessage
}

// ReadResource reads a resource of a server by URI (listed or not) and
// returns its typed contents, for hosts that use resources themselves
// (RenderResource renders one for the model instead). A URI with user
// information is refused; at most MaxResourceItems items are accepted
// and a response is bounded as every call's is (16 MiB on stdio and
// sockets). The server is connected as its lifecycle allows; the call's
// deadline is the server's requestTimeoutMs. A failure is an *Error.
func (r *Runtime) ReadResource(ctx context.Context, server, uri string) (*ReadResult, error) {
	if !slices.Contains(r.sys.Names(), server) {
		return nil, messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server)
	}
	t, err := r.mcp.ResolveRead(server, uri, nil)
	if err != nil {
		return nil, err
	}
	return r.readTyped(ctx, server, t.URI)
}

// ReadTemplate reads a resource of a server's template (named by its
// uriTemplate or its name) expanded with args per RFC 6570 level 4: a
// string, number or boolean is a value, an array a list, an object an
// associative array; the arguments are bounded to 256 KiB. The result is
// as ReadResource's.
func (r *Runtime) ReadTemplate(ctx context.Context, server, template string, args map[string]any) (*ReadResult, error) {
	uri, err := r.expandTemplate(server, template, args)
	if err != nil {
		return nil, err
	}
	return r.readTyped(ctx, server, uri)
}

func (r *Runtime) readTyped(ctx context.Context, server, uri string) (*ReadResult, error) {
	params, _ := json.Marshal(map[string]string{"uri": uri})
	rep := r.sys.Request(ctx, server, "resources/read", params, messages.DeadlineCall, messages.OriginExplicit)
	if rep.Err != nil {
		return nil, rep.Err
	}
	return decodeReadResult(server, rep.Result)
}

func decodeReadResult(server string, raw json.RawMessage) (*ReadResult, error) {
	var wire struct {
		Contents []json.RawMessage `json:"contents"`
		Meta     json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, messages.Errorf(messages.KindProtocol, server, "the resources/read result is malformed")
	}
	if len(wire.Contents) > MaxResourceItems {
		return nil, messages.Errorf(messages.KindProtocol, server, "the resource has %d items, more than %d", len(wire.Contents), MaxResourceItems)
	}
	out := &ReadResult{Meta: metaObject(wire.Meta), Contents: make([]ResourceContents, 0, len(wire.Contents))}
	for _, item := range wire.Contents {
		var c struct {
			URI      string          `json:"uri"`
			MIMEType string          `json:"mimeType"`
			Text     string          `json:"text"`
			Blob     string          `json:"blob"`
			Meta     json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(item, &c); err != nil {
			return nil, messages.Errorf(messages.KindProtocol, server, "an item of the resource is malformed")
		}
		rc := ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Meta: metaObject(c.Meta), Raw: item}
		if c.Blob != "" {
			b, err := base64.StdEncoding.DecodeString(c.Blob)
			if err != nil {
				return nil, messages.Errorf(messages.KindProtocol, server, "a blob of the resource is not base64")
			}
			rc.Data = b
		}
		out.Contents = append(out.Contents, rc)
	}
	return out, nil
}

// RenderResource reads any resource of a server by URI (listed or not), as
// the model reads it through the mcp tool: each item after a source marker
// "[resource SERVER: URI]", at most 100 items and 16 MiB (seed 003), text
// cleaned of terminal and bidi controls and bounded by the output guard,
// images passed on, audio and binary content saved to files the text names.
// A URI with user information is refused. The server is connected as its
// lifecycle allows. A failure is a Result with IsError and a stable code.
func (r *Runtime) RenderResource(ctx context.Context, server, uri string) Result {
	if !slices.Contains(r.sys.Names(), server) {
		return errorResult(messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server))
	}
	t, err := r.mcp.ResolveRead(server, uri, nil)
	if err != nil {
		return errorResult(err)
	}
	return r.mcp.ReadResource(ctx, t.Server, t.URI)
}

// RenderTemplate reads a resource of a server's template as ReadTemplate
// does, rendered for the model as RenderResource renders it.
func (r *Runtime) RenderTemplate(ctx context.Context, server, template string, args map[string]any) Result {
	uri, err := r.expandTemplate(server, template, args)
	if err != nil {
		return errorResult(err)
	}
	return r.mcp.ReadResource(ctx, server, uri)
}

// expandTemplate resolves a template of server with args to a URI.
func (r *Runtime) expandTemplate(server, template string, args map[string]any) (string, *messages.Error) {
	if !slices.Contains(r.sys.Names(), server) {
		return "", messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server)
	}
	if args == nil {
		args = map[string]any{}
	}
	t, err := r.mcp.ResolveRead(server, template, args)
	if err != nil {
		return "", err
	}
	if t.Template == "" {
		return "", messages.Errorf(messages.KindInvalidArgs, server, "%q is not a resource template of %s", template, server)
	}
	return t.URI, nil
}

// errorResult renders an error as a failed Result with its stable code.
func errorResult(err *messages.Error) Result {
	details := map[string]any{"error": err.Code(), "message": err.Error()}
	if err.Server != "" {
		details["server"] = err.Server
	}
	return Result{Text: "Error: " + err.Error(), Details: details, IsError: true}
}
