package catalog

import (
	"fmt"
	"strings"
)

// MaxArgumentBytes bounds the arguments of one prompt or resource-template
// retrieval (seed 003): names and values together.
const MaxArgumentBytes = 256 << 10

// PromptArguments turns command words into a prompt's arguments, as seed
// 002 describes: NAME=VALUE sets the declared argument NAME; any other word
// fills the next declared argument not yet set, in declaration order. A
// word whose text before '=' is not a declared name is positional (a value
// may hold '='). More positional words than free arguments, or more than
// MaxArgumentBytes in all, is an error.
func PromptArguments(p Prompt, words []string) (map[string]string, error) {
	declared := map[string]bool{}
	for _, a := range p.Arguments {
		declared[a.Name] = true
	}
	out := map[string]string{}
	var positional []string
	size := 0
	for _, w := range words {
		size += len(w)
		if k, v, ok := strings.Cut(w, "="); ok && declared[k] {
			out[k] = v
			continue
		}
		positional = append(positional, w)
	}
	if size > MaxArgumentBytes {
		return nil, fmt.Errorf("the prompt's arguments are %d bytes, more than %d (256 KiB)", size, MaxArgumentBytes)
	}
	next := 0
	for _, w := range positional {
		for next < len(p.Arguments) && out[p.Arguments[next].Name] != "" {
			next++
		}
		if next == len(p.Arguments) {
			return nil, fmt.Errorf("prompt %q takes %d arguments; %q has no argument left to fill", p.Name, len(p.Arguments), clipWord(w))
		}
		out[p.Arguments[next].Name] = w
		next++
	}
	return out, nil
}

func clipWord(w string) string {
	w = CleanText(w)
	if len(w) > 40 {
		return w[:40] + "…"
	}
	return w
}
