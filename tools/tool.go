package tools

import (
	"context"
	"encoding/json"
)

// Tool is one agent-facing tool, ready to register with a model loop.
type Tool struct {
	// Name is the tool's name as the model sees it.
	Name string
	// Description is the tool's description as the model sees it.
	Description string
	// InputSchema is the JSON Schema of the tool's arguments.
	InputSchema json.RawMessage
	// Execute runs the tool with the model's arguments. It never returns a
	// Go error: failures are results with IsError set and a stable code in
	// Details.
	Execute func(ctx context.Context, args json.RawMessage) Result
}

// Result is what a tool returns.
type Result struct {
	// Text is what the model reads.
	Text string `json:"text"`
	// Details is the structured form for the host (never shown to the
	// model by mcprt itself). On failure it holds "error": a stable code.
	Details map[string]any `json:"details,omitempty"`
	// IsError marks a failed call.
	IsError bool `json:"isError,omitempty"`
	// Images are images the result passes to the model (at most MaxImages
	// PNG, JPEG, GIF or WebP images of up to MaxImageBytes each).
	Images []Image `json:"images,omitempty"`
}

// ErrorCode returns Details["error"], or "" for a success.
func (r Result) ErrorCode() string {
	if s, ok := r.Details["error"].(string); ok {
		return s
	}
	return ""
}
