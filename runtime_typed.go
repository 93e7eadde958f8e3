package mcprt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcprt/mcprt/messages"
)

// The typed API is for hosts that drive servers themselves, beside the
// model-facing tools: the same deadlines, leases, limits and failure
// reporting, with Go values instead of model text.

// Error is the one error type the runtime returns: Kind classifies it
// (errors.Is(err, ErrToolNotFound) matches on the kind alone), Server
// names the server, Message says what happened in one line.
type Error = messages.Error

// Errors to test with errors.Is.
var (
	ErrToolNotFound   = &Error{Kind: messages.KindToolNotFound}
	ErrServerNotFound = &Error{Kind: messages.KindServerNotFound}
	ErrServerDisabled = &Error{Kind: messages.KindServerDisabled}
	ErrAuthRequired   = &Error{Kind: messages.KindAuthRequired}
	ErrToolError      = &Error{Kind: messages.KindToolError}
	ErrTimeout        = &Error{Kind: messages.KindRequestTimeout}
	ErrDisconnected   = &Error{Kind: messages.KindDisconnected}
	ErrInvalidArgs    = &Error{Kind: messages.KindInvalidArgs}
)

// Content is one content item of a tool result.
type Content struct {
	// Type is "text", "image", "audio", "resource_link" or "resource".
	Type string
	// Text is a text item's text, or an embedded text resource's.
	Text string
	// Data is an image's or audio's bytes, or an embedded blob's.
	Data []byte
	// MIMEType of an image, audio or resource.
	MIMEType string
	// URI and Name of a resource link or an embedded resource.
	URI, Name string
	// Raw is the item as the server sent it (with its _meta and
	// annotations).
	Raw json.RawMessage
}

// CallResult is a tool's result.
type CallResult struct {
	Content []Content
	// Structured is the structuredContent, if any.
	Structured json.RawMessage
	// IsError is the server's own "the tool failed" (a result, not an
	// error of the call).
	IsError bool
	// Meta is the result's _meta.
	Meta json.RawMessage
}

// CallTool calls a server's tool with arguments (any value that marshals
// to a JSON object; nil for none) and returns its typed result. A call that
// could not be made or answered returns an *Error (ErrToolNotFound when the
// server has no such tool, ErrTimeout, ErrDisconnected, ...). Like the
// tools, it is never retried.
func (r *Runtime) CallTool(ctx context.Context, server, tool string, args any) (*CallResult, error) {
	if !slices.Contains(r.sys.Names(), server) {
		return nil, messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server)
	}
	rawArgs, err := json.Marshal(args)
	if err == nil && string(rawArgs) == "null" { // nil, or a nil map
		rawArgs = []byte(`{}`)
	}
	if err == nil && rawArgs[0] != '{' {
		err = fmt.Errorf("they must be a JSON object")
	}
	if err != nil {
		return nil, messages.Errorf(messages.KindInvalidArgs, server, "arguments: %s", err)
	}
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": json.RawMessage(rawArgs)})
	if known, ok := r.ServerTools(server); ok && !slices.ContainsFunc(known, func(t ToolInfo) bool { return t.Name == tool }) {
		return nil, messages.Errorf(messages.KindToolNotFound, server, "server %q offers no tool named %q", server, tool)
	}
	rep := r.sys.Request(ctx, server, "tools/call", params, messages.DeadlineCall, messages.OriginExplicit)
	if rep.Err != nil {
		return nil, rep.Err
	}
	return decodeCallResult(server, rep.Result)
}

func decodeCallResult(server string, raw json.RawMessage) (*CallResult, error) {
	var wire struct {
		Content    []json.RawMessage `json:"content"`
		Structured json.RawMessage   `json:"structuredContent"`
		IsError    bool              `json:"isError"`
		Meta       json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, messages.Errorf(messages.KindProtocol, server, "the tool result is not a CallToolResult")
	}
	out := &CallResult{Structured: wire.Structured, IsError: wire.IsError, Meta: wire.Meta}
	for _, item := range wire.Content {
		var c struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Resource *struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
				Blob     string `json:"blob"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(item, &c); err != nil {
			return nil, messages.Errorf(messages.KindProtocol, server, "a content item of the tool result is malformed")
		}
		ci := Content{Type: c.Type, Text: c.Text, MIMEType: c.MIMEType, URI: c.URI, Name: c.Name, Raw: item}
		if c.Data != "" {
			b, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				return nil, messages.Errorf(messages.KindProtocol, server, "a %s item's data is not base64", c.Type)
			}
			ci.Data = b
		}
		if c.Resource != nil {
			ci.URI, ci.MIMEType, ci.Text = c.Resource.URI, c.Resource.MIMEType, c.Resource.Text
			if c.Resource.Blob != "" {
				b, err := base64.StdEncoding.DecodeString(c.Resource.Blob)
				if err != nil {
					return nil, messages.Errorf(messages.KindProtocol, server, "an embedded resource's blob is not base64")
				}
				ci.Data = b
			}
		}
		out.Content = append(out.Content, ci)
	}
	return out, nil
}
