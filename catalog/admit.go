package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Seed 003's metadata limits: what a server's listing must keep to before
// the model sees any of it. A tool that breaks the tool rules is refused
// alone (a ToolRejection); a prompt that breaks the prompt rules fails that
// server's prompt catalog; a resource that breaks the resource rules fails
// that server's resource catalog. Text the model reads (descriptions,
// titles) is cut at MaxDescriptionBytes with a marker and cleaned of
// terminal and bidi controls (CleanText).
const (
	// MaxToolNameLen bounds a tool's name, which must be ASCII letters,
	// digits, '_', '-' or '.'.
	MaxToolNameLen = 128
	// MaxDescriptionBytes bounds a description or title of a tool, prompt,
	// prompt argument or resource; longer ones are cut with a marker.
	MaxDescriptionBytes = 16 << 10
	// MaxPromptNameBytes bounds a prompt's and a prompt argument's name.
	MaxPromptNameBytes = 256
	// MaxPromptArguments bounds the arguments one prompt declares.
	MaxPromptArguments = 100
	// MaxRejections is how many tool rejections a server's status names;
	// the rest are counted.
	MaxRejections = 5
)

// Tool rejection codes (stable identifiers).
const (
	CodeInvalidName   = "invalid-name"   // not 1–128 of [A-Za-z0-9_.-]
	CodeDuplicateName = "duplicate-name" // a name an earlier tool of the list has
	CodeMalformed     = "malformed"      // not a JSON object with the fields' types
)

// cutMarker ends a text cut at MaxDescriptionBytes.
const cutMarker = " […cut at 16 KiB]"

// ToolRejection is one tool of a listing that is not offered, and why.
// Name is set only when the name itself is valid; Message never quotes
// server content.
type ToolRejection struct {
	// Index is the tool's one-based position in the listing.
	Index   int    `json:"index"`
	Name    string `json:"name,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ValidToolNameRule reports whether name keeps the catalog's name rule:
// 1–128 ASCII letters, digits, '_', '-' or '.'.
func ValidToolNameRule(name string) bool {
	if len(name) == 0 || len(name) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// CleanDescription cleans a server's text and cuts it at
// MaxDescriptionBytes (on a character boundary) with a marker.
func CleanDescription(s string) string {
	s = CleanText(s)
	if len(s) <= MaxDescriptionBytes {
		return s
	}
	cut := MaxDescriptionBytes - len(cutMarker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + cutMarker
}

// AdmitTools decodes a tools/list result under the catalog's rules: tools
// with an invalid or duplicate name, or that are not objects, are refused
// one by one; a tool whose input schema a provider would refuse is kept
// but marked Unsupported; both are reported as rejections. Descriptions
// and titles are cleaned and bounded. An output
// schema the validator cannot use fails the whole listing (seed 003), with
// an error naming the tool's position.
func AdmitTools(items []json.RawMessage) ([]Tool, []ToolRejection, error) {
	out := make([]Tool, 0, len(items))
	var rej []ToolRejection
	seen := map[string]bool{}
	for i, raw := range items {
		var t Tool
		if json.Unmarshal(raw, &t) != nil {
			rej = append(rej, ToolRejection{Index: i + 1, Code: CodeMalformed, Message: "the tool is not a JSON object with a string name"})
			continue
		}
		if !ValidToolNameRule(t.Name) {
			rej = append(rej, ToolRejection{Index: i + 1, Code: CodeInvalidName, Message: "the name is not 1–128 ASCII letters, digits, '_', '-' or '.'"})
			continue
		}
		if seen[t.Name] {
			rej = append(rej, ToolRejection{Index: i + 1, Name: t.Name, Code: CodeDuplicateName, Message: "an earlier tool of the listing has the same name"})
			continue
		}
		seen[t.Name] = true
		if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
			if _, err := compileSchema(t.OutputSchema); err != nil {
				return nil, nil, fmt.Errorf("tool %d (%s) has an output schema the validator cannot use", i+1, t.Name)
			}
		}
		t.Title, t.Description = CleanDescription(t.Title), CleanDescription(t.Description)
		t.Meta = MetaObject(t.Meta)
		t.Fingerprint = Fingerprint(t)
		if _, r := CheckInputSchema(t.InputSchema); r != nil {
			t.Unsupported = r
			rej = append(rej, ToolRejection{Index: i + 1, Name: t.Name, Code: r.Code, Message: r.Message})
		}
		out = append(out, t)
	}
	return out, rej, nil
}

// validPromptName is the rule for prompt and prompt-argument names: 1–256
// bytes, no Unicode control, format or line-separator characters.
func validPromptName(s string) bool {
	if s == "" || len(s) > MaxPromptNameBytes || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) {
			return false
		}
	}
	return true
}

// AdmitPrompts decodes a prompts/list result under the prompt rules; any
// broken prompt (invalid or duplicate name, more than MaxPromptArguments
// arguments, an invalid or duplicate argument name) fails the whole prompt
// catalog with an error that quotes no server content.
func AdmitPrompts(items []json.RawMessage) ([]Prompt, error) {
	out := make([]Prompt, 0, len(items))
	seen := map[string]bool{}
	for i, raw := range items {
		var p Prompt
		if json.Unmarshal(raw, &p) != nil {
			return nil, fmt.Errorf("prompt %d is not a JSON object with a string name", i+1)
		}
		switch {
		case !validPromptName(p.Name):
			return nil, fmt.Errorf("prompt %d has an invalid name (1–256 bytes, no control or format characters)", i+1)
		case seen[p.Name]:
			return nil, fmt.Errorf("prompt %d has the name of an earlier prompt", i+1)
		case len(p.Arguments) > MaxPromptArguments:
			return nil, fmt.Errorf("prompt %d declares %d arguments, more than %d", i+1, len(p.Arguments), MaxPromptArguments)
		}
		seen[p.Name] = true
		args := map[string]bool{}
		for j := range p.Arguments {
			a := &p.Arguments[j]
			if !validPromptName(a.Name) || args[a.Name] {
				return nil, fmt.Errorf("prompt %d has an invalid or repeated argument name (argument %d)", i+1, j+1)
			}
			args[a.Name] = true
			a.Description = CleanDescription(a.Description)
		}
		p.Title, p.Description = CleanDescription(p.Title), CleanDescription(p.Description)
		p.Meta = MetaObject(p.Meta)
		out = append(out, p)
	}
	return out, nil
}

// CleanCached applies the text rules to an entry read from the cache (a
// cache written by an older version holds text as the server sent it):
// descriptions, titles and instructions are cleaned and bounded, and a tool
// whose name breaks the name rule is left out. Cheap when nothing needs
// cleaning.
func CleanCached(e Entry) Entry {
	if isClean(e) {
		return e
	}
	tools := e.Tools[:0:0]
	for _, t := range e.Tools {
		if !ValidToolNameRule(t.Name) {
			continue
		}
		t.Title, t.Description = CleanDescription(t.Title), CleanDescription(t.Description)
		tools = append(tools, t)
	}
	e.Tools = tools
	e.Instructions = CleanText(e.Instructions)
	res := append([]Resource(nil), e.Resources...)
	for i := range res {
		r := &res[i]
		r.Name, r.Title, r.Description = CleanText(r.Name), CleanText(r.Title), CleanText(r.Description)
	}
	e.Resources = res
	tmpl := append([]ResourceTemplate(nil), e.ResourceTemplates...)
	for i := range tmpl {
		t := &tmpl[i]
		t.Name, t.Title, t.Description = CleanText(t.Name), CleanText(t.Title), CleanText(t.Description)
	}
	e.ResourceTemplates = tmpl
	prompts := append([]Prompt(nil), e.Prompts...)
	for i := range prompts {
		p := &prompts[i]
		p.Title, p.Description = CleanDescription(p.Title), CleanDescription(p.Description)
	}
	e.Prompts = prompts
	return e
}

// isClean reports whether CleanCached would change nothing.
func isClean(e Entry) bool {
	same := func(s string) bool { return len(s) <= MaxDescriptionBytes && !needsCleaning(s) }
	for _, t := range e.Tools {
		if !ValidToolNameRule(t.Name) || !same(t.Title) || !same(t.Description) {
			return false
		}
	}
	for _, r := range e.Resources {
		if !same(r.Name) || !same(r.Title) || !same(r.Description) {
			return false
		}
	}
	for _, t := range e.ResourceTemplates {
		if !same(t.Name) || !same(t.Title) || !same(t.Description) {
			return false
		}
	}
	for _, p := range e.Prompts {
		if !same(p.Title) || !same(p.Description) {
			return false
		}
	}
	return !needsCleaning(e.Instructions)
}

// MetaObject keeps a _meta member that is a JSON object (compacted) and
// drops anything else (null, a string, malformed JSON): a host reading
// Meta gets an object or nothing.
func MetaObject(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil || m == nil {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}
