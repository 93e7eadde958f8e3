package clientside

import (
	"encoding/json"
	"errors"
	"fmt"
)

// SamplingSupport is what a host's sampling hook declares it can take
// beyond text messages.
type SamplingSupport struct {
	// Images and Audio accept image and audio content in messages.
	Images, Audio bool
	// Tools accepts requests that offer the model tools (2025-11-25),
	// with tool_use and tool_result content.
	Tools bool
}

// SamplingMessage is one message of a sampling request.
type SamplingMessage struct {
	Role string `json:"role"`
	// Content is the message's content blocks, each as sent (a single
	// block is read as a list of one).
	Content []json.RawMessage `json:"-"`
	// Text is the message's text blocks joined, for hosts that take text.
	Text string `json:"-"`
}

// SamplingRequest is a checked sampling/createMessage request.
type SamplingRequest struct {
	Messages         []SamplingMessage
	SystemPrompt     string
	ModelPreferences json.RawMessage
	IncludeContext   string
	Temperature      *float64
	MaxTokens        int
	StopSequences    []string
	Tools            json.RawMessage
	ToolChoice       json.RawMessage
	Metadata         json.RawMessage
}

type samplingWire struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	SystemPrompt     string          `json:"systemPrompt"`
	ModelPreferences json.RawMessage `json:"modelPreferences"`
	IncludeContext   string          `json:"includeContext"`
	Temperature      *float64        `json:"temperature"`
	MaxTokens        *int            `json:"maxTokens"`
	StopSequences    []string        `json:"stopSequences"`
	Tools            json.RawMessage `json:"tools"`
	ToolChoice       json.RawMessage `json:"toolChoice"`
	Metadata         json.RawMessage `json:"metadata"`
}

// ParamsError is a malformed request's params, with the field named: the
// server is answered -32602.
type ParamsError struct {
	Field  string
	Reason string
}

func (e *ParamsError) Error() string { return fmt.Sprintf("params.%s: %s", e.Field, e.Reason) }

// WireField names the params field a json.Unmarshal error is about (its
// dotted path, without array indexes), or fallback when the error names
// none (the params are not an object at all).
func WireField(err error, fallback string) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field
	}
	return fallback
}

// UnsupportedError is a well-formed request the host cannot serve: the
// server is answered with a clear error, never left waiting.
type UnsupportedError struct{ Reason string }

func (e *UnsupportedError) Error() string { return e.Reason }

// ParseSampling checks sampling/createMessage params against what the
// host's hook supports.
func ParseSampling(params json.RawMessage, can SamplingSupport) (SamplingRequest, error) {
	var w samplingWire
	if err := json.Unmarshal(params, &w); err != nil {
		return SamplingRequest{}, &ParamsError{Field: WireField(err, "messages"), Reason: "params are not an object of the createMessage shape"}
	}
	if w.MaxTokens == nil || *w.MaxTokens <= 0 {
		return SamplingRequest{}, &ParamsError{Field: "maxTokens", Reason: "a positive integer is required"}
	}
	if len(w.Messages) == 0 {
		return SamplingRequest{}, &ParamsError{Field: "messages", Reason: "at least one message is required"}
	}
	if len(w.Tools) > 0 && string(w.Tools) != "null" && !can.Tools {
		return SamplingRequest{}, &UnsupportedError{Reason: "sampling with tools is not supported by this client's host"}
	}
	req := SamplingRequest{
		SystemPrompt: w.SystemPrompt, ModelPreferences: w.ModelPreferences, IncludeContext: w.IncludeContext,
		Temperature: w.Temperature, MaxTokens: *w.MaxTokens, StopSequences: w.StopSequences,
		Tools: w.Tools, ToolChoice: w.ToolChoice, Metadata: w.Metadata,
	}
	for i, m := range w.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return SamplingRequest{}, &ParamsError{Field: fmt.Sprintf("messages[%d].role", i), Reason: `must be "user" or "assistant"`}
		}
		blocks, err := contentBlocks(m.Content)
		if err != nil {
			return SamplingRequest{}, &ParamsError{Field: fmt.Sprintf("messages[%d].content", i), Reason: err.Error()}
		}
		msg := SamplingMessage{Role: m.Role, Content: blocks}
		for j, b := range blocks {
			var head struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(b, &head)
			ok := false
			switch head.Type {
			case "text":
				ok = true
				if msg.Text != "" {
					msg.Text += "\n"
				}
				msg.Text += head.Text
			case "image":
				ok = can.Images
			case "audio":
				ok = can.Audio
			case "tool_use", "tool_result":
				ok = can.Tools
			default:
				return SamplingRequest{}, &ParamsError{Field: fmt.Sprintf("messages[%d].content[%d].type", i, j), Reason: fmt.Sprintf("unknown content type %q", head.Type)}
			}
			if !ok {
				return SamplingRequest{}, &UnsupportedError{Reason: fmt.Sprintf("%s content in sampling messages is not supported by this client's host", head.Type)}
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// contentBlocks reads a message's content: one block or a list of them.
func contentBlocks(raw json.RawMessage) ([]json.RawMessage, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err == nil {
		if len(list) == 0 {
			return nil, fmt.Errorf("no content")
		}
		return list, nil
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(raw, &one); err != nil || one == nil {
		return nil, fmt.Errorf("content must be a content block or a list of them")
	}
	return []json.RawMessage{raw}, nil
}
