package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/shlex"
	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
)

// clientFlags are how the CLI answers what servers ask of the client.
type clientFlags struct {
	elicitation string   // ask, accept-defaults or decline
	sampling    string   // decline, or "command CMD ARGS"
	roots       []string // --root PATH, repeatable; default the working directory
}

func (c *clientFlags) register(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&c.elicitation, "elicitation", "ask", "answer servers' questions: ask (on a terminal; declines without one), accept-defaults or decline")
	f.StringVar(&c.sampling, "sampling", "decline", `answer servers' sampling requests: decline, or "command CMD ARGS" (reads the request as JSON on stdin, prints the answer)`)
	f.StringArrayVar(&c.roots, "root", nil, "a root directory servers may work in (repeatable; default: the working directory)")
}

// hooks builds the runtime's client hooks; stdin and stderr are the
// person's terminal when they are one.
func (g *globals) clientHooks() (mcprt.ClientHooks, error) {
	c := g.client
	var h mcprt.ClientHooks
	switch c.elicitation {
	case "ask", "accept-defaults", "decline":
	default:
		return h, usage("--elicitation is ask, accept-defaults or decline, not %q", c.elicitation)
	}
	h.Elicit = func(ctx context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
		switch {
		case c.elicitation == "accept-defaults":
			if _, err := q.Form.Defaults(); err != nil {
				return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
			}
			return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept}, nil
		case c.elicitation == "ask" && isTerminal(os.Stdin) && isTerminal(os.Stderr):
			return askForm(ctx, os.Stdin, g.stderr, q)
		}
		return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
	}
	h.ElicitURL = func(ctx context.Context, q mcprt.ElicitURL) (mcprt.ElicitAnswer, error) {
		if c.elicitation == "ask" && isTerminal(os.Stdin) && isTerminal(os.Stderr) {
			return askURL(os.Stdin, g.stderr, q)
		}
		return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
	}
	switch {
	case c.sampling == "decline":
	case strings.HasPrefix(c.sampling, "command "):
		words, err := shlex.Split(strings.TrimPrefix(c.sampling, "command "))
		if err != nil || len(words) == 0 {
			return h, usage(`--sampling "command CMD ARGS" needs a command`)
		}
		h.Sample = func(ctx context.Context, q mcprt.SamplingRequest) (mcprt.SamplingResult, error) {
			return sampleWith(ctx, words, q)
		}
	default:
		return h, usage(`--sampling is decline or "command CMD ARGS", not %q`, c.sampling)
	}
	roots := c.roots
	if len(roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return h, usage("the working directory cannot be read for --root: %s", err)
		}
		roots = []string{wd}
	}
	for _, r := range roots {
		root, err := rootOf(r)
		if err != nil {
			return h, usage("--root %s: %s", r, err)
		}
		h.Roots = append(h.Roots, root)
	}
	if g.asker != nil {
		g.asker.hooks(&h) // runtime session --ask-host
	}
	h.Progress = func(p mcprt.Progress) {
		if !isTerminal(os.Stderr) {
			return
		}
		total := ""
		if p.Total > 0 {
			total = "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
		}
		fmt.Fprintf(g.stderr, "runtime: %s: progress %s%s %s\n", p.Server, strconv.FormatFloat(p.Progress, 'f', -1, 64), total, escapeTerminal(p.Message))
	}
	return h, nil
}

// askForm asks the person field by field, with the schema's titles and
// defaults; an empty line takes the default (or leaves the field out); a
// line "!decline" or "!cancel" ends the form so.
func askForm(ctx context.Context, in io.Reader, out io.Writer, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
	r := bufio.NewReader(in)
	fmt.Fprintf(out, "\n%s asks: %s\n(empty line: default; !decline or !cancel to refuse)\n", q.Server, escapeTerminal(q.Message))
	content := map[string]any{}
	for _, f := range q.Form.Fields {
		for {
			if ctx.Err() != nil {
				return mcprt.ElicitAnswer{Action: mcprt.ElicitCancel}, nil
			}
			label := f.Title
			if label == "" {
				label = f.Name
			}
			hint := string(f.Kind)
			if len(f.Options) > 0 {
				var opts []string
				for _, o := range f.Options {
					opts = append(opts, o.Value)
				}
				hint = strings.Join(opts, "|")
			}
			def := ""
			if f.Default != nil {
				d, _ := json.Marshal(f.Default)
				def = " [" + string(d) + "]"
			}
			req := ""
			if f.Required {
				req = " (required)"
			}
			fmt.Fprintf(out, "%s (%s)%s%s: ", escapeTerminal(label), escapeTerminal(hint), req, escapeTerminal(def))
			line, err := r.ReadString('\n')
			line = strings.TrimSpace(line)
			switch line {
			case "!decline":
				return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
			case "!cancel":
				return mcprt.ElicitAnswer{Action: mcprt.ElicitCancel}, nil
			}
			if line == "" {
				if err != nil {
					return mcprt.ElicitAnswer{Action: mcprt.ElicitCancel}, nil
				}
				break
			}
			v, perr := f.Check(parseAnswer(f, line))
			if perr != nil {
				fmt.Fprintf(out, "  %s; try again\n", perr)
				continue
			}
			content[f.Name] = v
			break
		}
	}
	return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept, Content: content}, nil
}

// parseAnswer reads a typed line as the field's kind.
func parseAnswer(f mcprt.FormField, line string) any {
	switch f.Kind {
	case mcprt.FieldNumber, mcprt.FieldInteger:
		if n, err := strconv.ParseFloat(line, 64); err == nil {
			return n
		}
	case mcprt.FieldBoolean:
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			return true
		case "n", "no", "false":
			return false
		}
	case mcprt.FieldMulti:
		var out []any
		for _, p := range strings.Split(line, ",") {
			out = append(out, strings.TrimSpace(p))
		}
		return out
	}
	return line
}

func askURL(in io.Reader, out io.Writer, q mcprt.ElicitURL) (mcprt.ElicitAnswer, error) {
	fmt.Fprintf(out, "\n%s asks you to open a page on %s:\n  %s\n  %s\nOpen it and continue? [y/N] ", q.Server, escapeTerminal(q.Host), escapeTerminal(q.Message), escapeTerminal(q.URL))
	line, _ := bufio.NewReader(in).ReadString('\n')
	if s := strings.ToLower(strings.TrimSpace(line)); s == "y" || s == "yes" {
		return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept}, nil
	}
	return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
}

// sampleWith runs the sampling command: the request as JSON on its stdin;
// its stdout is the answer, as {"text", "model", "stopReason"}, as MCP's
// result ({"content": {"type": "text", "text"}, "model", "stopReason"}) or
// as plain text.
func sampleWith(ctx context.Context, words []string, q mcprt.SamplingRequest) (mcprt.SamplingResult, error) {
	msgs := make([]map[string]string, 0, len(q.Messages))
	for _, m := range q.Messages {
		msgs = append(msgs, map[string]string{"role": m.Role, "text": m.Text})
	}
	req, _ := json.Marshal(map[string]any{
		"server": q.Server, "messages": msgs, "systemPrompt": q.SystemPrompt, "maxTokens": q.MaxTokens,
		"modelPreferences": q.ModelPreferences, "temperature": q.Temperature, "stopSequences": q.StopSequences,
	})
	cmd := exec.CommandContext(ctx, words[0], words[1:]...)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return mcprt.SamplingResult{}, fmt.Errorf("the sampling command failed: %w", err)
	}
	out := bytes.TrimSpace(stdout.Bytes())
	var res struct {
		Text       *string `json:"text"`
		Model      string  `json:"model"`
		StopReason string  `json:"stopReason"`
		Content    *struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		} `json:"content"` // MCP's CreateMessageResult shape
	}
	if json.Unmarshal(out, &res) == nil && res.Text == nil && res.Content != nil && res.Content.Type == "text" {
		res.Text = res.Content.Text
	}
	if res.Text != nil {
		return mcprt.SamplingResult{Text: *res.Text, Model: res.Model, StopReason: res.StopReason}, nil
	}
	if len(out) == 0 {
		return mcprt.SamplingResult{}, errors.New("the sampling command printed nothing")
	}
	return mcprt.SamplingResult{Text: string(out), Model: words[0]}, nil
}

// rootOf is one --root: a path (made absolute) or a file:// URI as a
// server would see it.
func rootOf(r string) (mcprt.Root, error) {
	if strings.HasPrefix(strings.ToLower(r), "file:") {
		u, err := url.Parse(r)
		if err != nil || !strings.EqualFold(u.Scheme, "file") || (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") {
			return mcprt.Root{}, fmt.Errorf("a file URI must be file:///ABSOLUTE/PATH")
		}
		u.Scheme, u.Host = "file", ""
		return mcprt.Root{URI: u.String(), Name: path.Base(u.Path)}, nil
	}
	abs, err := filepath.Abs(r)
	if err != nil {
		return mcprt.Root{}, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return mcprt.Root{URI: u.String(), Name: filepath.Base(abs)}, nil
}
