package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/catalog"
)

// callResult is the part of a tools/call result the model reads.
type callResult struct {
	Content           []contentItem   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

type contentItem struct {
	Type     string        `json:"type"`
	Text     string        `json:"text"`
	MimeType string        `json:"mimeType"`
	Data     string        `json:"data"`
	URI      string        `json:"uri"`
	Name     string        `json:"name"`
	Resource *resourceBody `json:"resource"`
}

type resourceBody struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Blob     string `json:"blob"`
}

// rendering collects what a result shows the model.
type rendering struct {
	parts   []string
	images  []Image
	omitted bool // something was left out of the preview: the full result goes to a file
	limits  outputLimits
}

// image passes an image through when it is of a supported type and size
// and fewer than MaxImages went before; otherwise it is omitted with a
// marker (and the full result is saved).
func (r *rendering) image(kind, mime, data string) {
	size := decodedLen(data)
	switch {
	case kind == "image" && supportedImage[mime] && size <= MaxImageBytes && len(r.images) < MaxImages:
		r.images = append(r.images, Image{MimeType: mime, Data: data})
		r.parts = append(r.parts, fmt.Sprintf("[image %d: %s, %d bytes]", len(r.images), mime, size))
	case kind == "audio":
		r.blob("audio", mime, data)
	default:
		r.omitted = true
		r.parts = append(r.parts, fmt.Sprintf("[%s omitted from the preview: %s, %d bytes]", kind, orUnknown(mime), size))
	}
}

// blob saves audio or a binary resource to a file of its own and names it
// (as an image is passed on), or, when it cannot be saved, leaves it out
// with a marker (the full result is saved).
func (r *rendering) blob(what, mime, data string) {
	path, n, err := saveBlob(data, mime)
	if err != nil {
		r.omitted = true
		r.parts = append(r.parts, fmt.Sprintf("[%s omitted from the preview: %s, %d bytes]", what, orUnknown(mime), decodedLen(data)))
		return
	}
	r.parts = append(r.parts, fmt.Sprintf("[%s saved to %s: %s, %d bytes]", what, path, orUnknown(mime), n))
}

func (r *rendering) resource(b *resourceBody) {
	switch {
	case b == nil:
	case catalog.HasUserinfo(b.URI):
		r.parts = append(r.parts, "[a resource whose URI holds user information was left out]")
	case b.Text != "":
		r.parts = append(r.parts, b.Text)
	case b.Blob != "" && strings.HasPrefix(b.MimeType, "image/"):
		r.image("image", b.MimeType, b.Blob)
	case b.Blob != "":
		r.blob("resource "+b.URI, b.MimeType, b.Blob)
	default:
		r.parts = append(r.parts, fmt.Sprintf("[resource: %s]", b.URI))
	}
}

// decodedLen is the length of the bytes base64 data decodes to, from its
// length and padding alone (len*3/4 would count the padding: a 4-byte
// blob as 6).
func decodedLen(data string) int {
	n := len(strings.TrimRight(data, "="))
	return n * 3 / 4
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// renderCall turns a tools/call result into the model's text, images and
// the host's details: structuredContent is validated against the output
// schema the tool had when the call began (error results are exempt), long
// text is cut to a preview, details are bounded, and whatever the preview
// leaves out is saved in full to a private file that the preview names.
func (m *MCP) renderCall(e *entry, raw json.RawMessage) Result {
	r, err := decodeCallResult(raw)
	if err != nil {
		return Result{Text: "Error: server returned a malformed tools/call result", IsError: true,
			Details: map[string]any{"error": "tool_error", "server": e.Server, "tool": e.Name}}
	}
	rd := rendering{limits: m.limits}
	for i := range r.Content {
		c := &r.Content[i]
		switch c.Type {
		case "text":
			rd.parts = append(rd.parts, c.Text)
		case "image", "audio":
			rd.image(c.Type, c.MimeType, c.Data)
		case "resource_link":
			rd.parts = append(rd.parts, fmt.Sprintf("[resource link: %s]", c.URI))
		case "resource":
			rd.resource(c.Resource)
		default:
			rd.parts = append(rd.parts, fmt.Sprintf("[%s content]", c.Type))
		}
	}
	text := strings.Join(rd.parts, "\n")
	hasStructured := len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null"
	if text == "" && hasStructured {
		text = string(r.StructuredContent)
	}
	if text == "" {
		text = "(empty result)"
	}
	details := map[string]any{"server": e.Server, "tool": e.Name}
	res := Result{Images: rd.images, Details: details}
	if r.IsError {
		details["error"] = "tool_error"
		res.IsError = true
		text = "Error: " + text + expectedParameters(e)
	} else if e.Tool != nil && len(e.Tool.OutputSchema) > 0 {
		var err error
		if !hasStructured {
			err = fmt.Errorf("%w: the tool declares an output schema but returned no structuredContent", catalog.ErrOutputSchema)
		} else {
			err = m.outputs.Validate(e.Tool.Fingerprint, e.Tool.OutputSchema, r.StructuredContent)
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), catalog.ErrOutputSchema.Error()+": ")
			details["error"], details["validation"] = "tool_error", msg
			res.IsError = true
			text = "Error: the result of " + e.Name + " does not match its output schema (" + msg + ")\n" + text
		}
	}
	return m.guard(res, text, raw, rd.omitted)
}

// renderResource turns a resources/read result into the model's text:
// each item after a source marker naming the server and the item's URI, at
// most MaxReadItems items (the rest are left out with a marker, and the
// whole result saved), a result over MaxReadBytes refused.
func (m *MCP) renderResource(server, tool string, raw json.RawMessage) Result {
	details := map[string]any{"server": server, "tool": tool}
	if tool == "" {
		delete(details, "tool")
	}
	if len(raw) > catalog.MaxReadBytes {
		return Result{Text: fmt.Sprintf("Error: the resource read returned %d bytes, more than %d (16 MiB)", len(raw), catalog.MaxReadBytes), IsError: true,
			Details: map[string]any{"error": "tool_error", "server": server, "tool": tool}}
	}
	var r struct {
		Contents []resourceBody `json:"contents"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Result{Text: "Error: server returned a malformed resources/read result", IsError: true,
			Details: map[string]any{"error": "tool_error", "server": server, "tool": tool}}
	}
	rd := rendering{limits: m.limits}
	for i := range r.Contents {
		if i == catalog.MaxReadItems {
			rd.omitted = true
			rd.parts = append(rd.parts, fmt.Sprintf("[%d more items left out: a read shows at most %d]", len(r.Contents)-i, catalog.MaxReadItems))
			break
		}
		b := &r.Contents[i]
		if catalog.HasUserinfo(b.URI) {
			rd.parts = append(rd.parts, "[a resource whose URI holds user information was left out]")
			continue
		}
		rd.parts = append(rd.parts, fmt.Sprintf("[resource %s: %s]", server, b.URI))
		rd.resource(b)
	}
	text := strings.Join(rd.parts, "\n")
	if text == "" {
		text = "(empty resource)"
	}
	return m.guard(Result{Images: rd.images, Details: details}, text, raw, rd.omitted)
}

// guard applies the output limits: text over the byte or line limit is cut
// to a preview, the raw result goes into details only within the details
// limit, and when anything was left out (or cleaned) the full result is
// written to a file named in the text.
func (m *MCP) guard(res Result, text string, raw json.RawMessage, omitted bool) Result {
	lim := m.limits
	// Server text loses its terminal and bidi controls before the model
	// (or a terminal) sees it; the original stays in the saved file.
	if clean := catalog.CleanText(text); clean != text {
		text, omitted = clean, true
	}
	if m.opts.Settings.OutputGuardOff {
		// settings.outputGuard false: the whole text and the raw result.
		res.Text, res.Details["result"] = text, raw
		return res
	}
	preview, cut := cutText(text, lim.maxText, lim.maxLines)
	if len(raw) <= lim.maxDetails {
		res.Details["result"] = raw
	} else {
		res.Details["result"] = map[string]any{"omitted": true, "bytes": len(raw)}
		omitted = true
	}
	if !cut && !omitted {
		res.Text = text
		return res
	}
	path, err := m.results.save(raw)
	if err != nil {
		res.Text = preview + "\n\n[The full result could not be saved: " + err.Error() + "]"
		return res
	}
	res.Details["fullResultPath"] = path
	if cut {
		preview += fmt.Sprintf("\n\n[Output truncated: showing %d of %d bytes, %d of %d lines.]", len(preview), len(text), strings.Count(preview, "\n")+1, strings.Count(text, "\n")+1)
	}
	res.Text = preview + "\n[Full result (JSON): " + path + "]"
	return res
}

// cutText cuts text to at most maxLines lines and maxBytes bytes (on a
// character boundary); cut reports whether it did.
func cutText(text string, maxBytes, maxLines int) (string, bool) {
	cut := false
	if n := strings.Count(text, "\n") + 1; n > maxLines {
		idx := 0
		for i := 0; i < maxLines; i++ {
			idx += strings.IndexByte(text[idx:], '\n') + 1
		}
		text, cut = text[:idx-1], true
	}
	if len(text) > maxBytes {
		end := maxBytes
		for end > 0 && text[end]&0xC0 == 0x80 {
			end--
		}
		text, cut = text[:end], true
	}
	return text, cut
}
