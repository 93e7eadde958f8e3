package mcprt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/tools"
)

// PromptInfo is one prompt a server offers, for hosts that show prompts as
// commands.
type PromptInfo struct {
	Server string `json:"server"`
	catalog.Prompt
}

// Prompts returns every known prompt (from the cache or a listing), by
// server in configuration order. It never connects anything.
func (r *Runtime) Prompts() []PromptInfo {
	snap := r.sys.Catalog().Snapshot()
	var out []PromptInfo
	for _, s := range r.sys.Names() {
		for _, p := range snap.Server(s).Prompts {
			out = append(out, PromptInfo{Server: s, Prompt: p})
		}
	}
	return out
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Text is the message's text (resources inlined, other content as
	// markers).
	Text string `json:"text"`
	// Images are the message's images.
	Images []tools.Image `json:"images,omitempty"`
}

// PromptResult is a rendered prompt.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	// Text is every message flattened into one, with [user] and
	// [assistant] markers when there is more than one message, for hosts
	// that insert a prompt as a single user message.
	Text string `json:"text"`
}

// GetPrompt renders a server's prompt with arguments (prompts/get). When
// the prompt is known, its required arguments are checked first and
// unknown ones refused; the server is connected as its lifecycle allows.
func (r *Runtime) GetPrompt(ctx context.Context, server, name string, args map[string]string) (PromptResult, error) {
	if !slices.Contains(r.sys.Names(), server) {
		return PromptResult{}, messages.Errorf(messages.KindServerNotFound, "", "no server named %q is configured", server)
	}
	for _, p := range r.sys.Catalog().Snapshot().Server(server).Prompts {
		if p.Name != name {
			continue
		}
		declared := map[string]bool{}
		for _, a := range p.Arguments {
			declared[a.Name] = true
			if _, ok := args[a.Name]; a.Required && !ok {
				return PromptResult{}, messages.Errorf(messages.KindInvalidArgs, server, "prompt %q needs the argument %q", name, a.Name)
			}
		}
		var unknown []string
		for k := range args {
			if !declared[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return PromptResult{}, messages.Errorf(messages.KindInvalidArgs, server, "prompt %q has no argument %q", name, unknown[0])
		}
	}
	if args == nil {
		args = map[string]string{}
	}
	size := 0
	for k, v := range args {
		size += len(k) + len(v)
	}
	if size > catalog.MaxArgumentBytes {
		return PromptResult{}, messages.Errorf(messages.KindInvalidArgs, server, "the prompt's arguments are %d bytes, more than %d (256 KiB)", size, catalog.MaxArgumentBytes)
	}
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	rep := r.sys.Request(ctx, server, "prompts/get", params, messages.DeadlineCall, messages.OriginExplicit)
	if rep.Err != nil {
		return PromptResult{}, rep.Err
	}
	res, err := renderPrompt(rep.Result)
	if err != nil {
		return res, err
	}
	// The prompt's text is bounded and cleaned like tool output.
	res.Description = catalog.CleanText(res.Description)
	for i := range res.Messages {
		res.Messages[i].Text = r.mcp.BoundText(res.Messages[i].Text, rep.Result)
	}
	res.Text = r.mcp.BoundText(res.Text, rep.Result)
	return res, nil
}

// GetPromptWords renders a prompt from command words, as seed 002's
// slash commands take them: NAME=VALUE for a declared argument, any other
// word for the next declared argument not yet set
// (catalog.PromptArguments). An unknown prompt takes NAME=VALUE words only.
func (r *Runtime) GetPromptWords(ctx context.Context, server, name string, words []string) (PromptResult, error) {
	for _, p := range r.sys.Catalog().Snapshot().Server(server).Prompts {
		if p.Name == name {
			args, err := catalog.PromptArguments(p, words)
			if err != nil {
				return PromptResult{}, messages.Errorf(messages.KindInvalidArgs, server, "%s", err)
			}
			return r.GetPrompt(ctx, server, name, args)
		}
	}
	args := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return PromptResult{}, messages.Errorf(messages.KindInvalidArgs, server, "prompt %q is not known yet, so its arguments must be NAME=VALUE", name)
		}
		args[k] = v
	}
	return r.GetPrompt(ctx, server, name, args)
}

// renderPrompt decodes a prompts/get result.
func renderPrompt(raw json.RawMessage) (PromptResult, error) {
	var res struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string `json:"role"`
			Content struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				MimeType string `json:"mimeType"`
				Data     string `json:"data"`
				URI      string `json:"uri"`
				Resource *struct {
					URI  string `json:"uri"`
					Text string `json:"text"`
				} `json:"resource"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return PromptResult{}, messages.Errorf(messages.KindProtocol, "", "prompts/get result is malformed")
	}
	out := PromptResult{Description: res.Description}
	var flat []string
	for _, m := range res.Messages {
		pm := PromptMessage{Role: m.Role}
		c := m.Content
		switch c.Type {
		case "text":
			pm.Text = c.Text
		case "image":
			pm.Images = append(pm.Images, tools.Image{MimeType: c.MimeType, Data: c.Data})
			pm.Text = fmt.Sprintf("[image: %s]", c.MimeType)
		case "resource":
			if c.Resource != nil && c.Resource.Text != "" {
				pm.Text = c.Resource.Text
			} else if c.Resource != nil {
				pm.Text = "[resource: " + c.Resource.URI + "]"
			}
		case "resource_link":
			pm.Text = "[resource link: " + c.URI + "]"
		default:
			pm.Text = fmt.Sprintf("[%s content omitted]", c.Type)
		}
		out.Messages = append(out.Messages, pm)
		flat = append(flat, "["+m.Role+"]\n"+pm.Text)
	}
	switch len(out.Messages) {
	case 0:
	case 1:
		out.Text = out.Messages[0].Text
	default:
		out.Text = strings.Join(flat, "\n\n")
	}
	return out, nil
}
