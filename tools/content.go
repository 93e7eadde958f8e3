package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// callResult is the part of a tools/call result the model reads.
type callResult struct {
	Content           []contentItem   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

type contentItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Resource *struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"resource"`
}

// renderCall turns a tools/call result into the model's text.
func renderCall(server, tool string, raw json.RawMessage) Result {
	var r callResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return Result{Text: "Error: server returned a malformed tools/call result", IsError: true,
			Details: map[string]any{"error": "tool_error", "server": server, "tool": tool}}
	}
	var parts []string
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "image", "audio":
			parts = append(parts, fmt.Sprintf("[%s: %s, %d bytes]", c.Type, c.MimeType, len(c.Data)*3/4))
		case "resource_link":
			parts = append(parts, fmt.Sprintf("[resource link: %s]", c.URI))
		case "resource":
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource: %s]", c.Resource.URI))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%s content]", c.Type))
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" && len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		text = string(r.StructuredContent)
	}
	if text == "" {
		text = "(empty result)"
	}
	details := map[string]any{"server": server, "tool": tool, "result": raw}
	if r.IsError {
		details["error"] = "tool_error"
		return Result{Text: "Error: " + text, Details: details, IsError: true}
	}
	return Result{Text: text, Details: details}
}
