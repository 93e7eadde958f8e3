package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Tool is one tool as a server listed it, with the fingerprint of its
// definition.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Meta is the tool's _meta as the server sent it (a JSON object, or
	// nil); it is not part of the fingerprint.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// Fingerprint is a hash of the whole definition (name, title,
	// description, schemas, annotations): it changes exactly when the tool
	// does, so anything bound to one definition (a direct tool, a call's
	// output schema) can tell it is stale.
	Fingerprint string `json:"fingerprint"`
	// Unsupported says why a model provider would refuse the tool's input
	// schema (CheckInputSchema), nil when it would not: such a tool is
	// marked in list and search and is never a direct tool.
	Unsupported *Rejection `json:"unsupported,omitempty"`
}

// Resource is one listed resource.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
	// Meta is the resource's _meta as the server sent it (a JSON object,
	// or nil).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ResourceTemplate is one listed resource template.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
	// Meta is the template's _meta as the server sent it (a JSON object,
	// or nil).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Prompt is one listed prompt.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	// Meta is the prompt's _meta as the server sent it (a JSON object, or
	// nil).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PromptArgument is one argument a prompt declares.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Entry is everything known about one server's metadata: what the cache file
// holds per server, and what the runtime keeps in memory.
type Entry struct {
	Tools             []Tool             `json:"tools"`
	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
	Prompts           []Prompt           `json:"prompts,omitempty"`
	Instructions      string             `json:"instructions,omitempty"`
	// Rejections are the tools of the listing that are refused (an invalid
	// or duplicate name) or unsupported (an input schema a provider would
	// refuse), in listing order: seed 003's unsupportedTools.
	Rejections []ToolRejection `json:"rejections,omitempty"`
}

// Clone returns a copy that shares no slices with e (the raw schemas are
// immutable by convention and shared).
func (e Entry) Clone() Entry {
	out := e
	out.Tools = append([]Tool(nil), e.Tools...)
	out.Resources = append([]Resource(nil), e.Resources...)
	out.ResourceTemplates = append([]ResourceTemplate(nil), e.ResourceTemplates...)
	out.Prompts = append([]Prompt(nil), e.Prompts...)
	out.Rejections = append([]ToolRejection(nil), e.Rejections...)
	for i := range out.Prompts {
		out.Prompts[i].Arguments = append([]PromptArgument(nil), out.Prompts[i].Arguments...)
	}
	return out
}

// ParseTools decodes tools/list items into tools with fingerprints. Items
// without a name are dropped.
func ParseTools(items []json.RawMessage) []Tool {
	out := make([]Tool, 0, len(items))
	for _, raw := range items {
		var t Tool
		if json.Unmarshal(raw, &t) != nil || t.Name == "" {
			continue
		}
		t.Fingerprint = Fingerprint(t)
		out = append(out, t)
	}
	return out
}

// ParseResources decodes resources/list items (those without a URI are
// dropped; a missing name becomes the URI).
func ParseResources(items []json.RawMessage) []Resource {
	out := make([]Resource, 0, len(items))
	for _, raw := range items {
		var r Resource
		if json.Unmarshal(raw, &r) != nil || r.URI == "" {
			continue
		}
		if r.Name == "" {
			r.Name = r.URI
		}
		out = append(out, r)
	}
	return out
}

// ParseResourceTemplates decodes resources/templates/list items.
func ParseResourceTemplates(items []json.RawMessage) []ResourceTemplate {
	out := make([]ResourceTemplate, 0, len(items))
	for _, raw := range items {
		var r ResourceTemplate
		if json.Unmarshal(raw, &r) != nil || r.URITemplate == "" {
			continue
		}
		if r.Name == "" {
			r.Name = r.URITemplate
		}
		out = append(out, r)
	}
	return out
}

// ParsePrompts decodes prompts/list items.
func ParsePrompts(items []json.RawMessage) []Prompt {
	out := make([]Prompt, 0, len(items))
	for _, raw := range items {
		var p Prompt
		if json.Unmarshal(raw, &p) != nil || p.Name == "" {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Fingerprint hashes a tool's definition: its name, title, description,
// schemas and annotations, with the schemas in canonical form (object keys
// sorted), so that two listings of the same definition agree however the
// server spaced its JSON.
func Fingerprint(t Tool) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(t.Name), []byte(t.Title), []byte(t.Description),
		canonical(t.InputSchema), canonical(t.OutputSchema), canonical(t.Annotations)} {
		var n [8]byte
		l := len(part)
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// canonical re-encodes JSON with sorted object keys (encoding/json sorts map
// keys); invalid or empty input is returned as it is.
func canonical(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}
