package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
)

// Tool prefix modes (toolPrefix): how a direct tool's name is made from its
// server's name and its own.
const (
	PrefixServer = "server" // <server>_<tool> (the default)
	PrefixShort  = "short"  // like server, with a trailing "-mcp" dropped from the server name
	PrefixNone   = "none"   // <tool>
	PrefixMCP    = "mcp"    // mcp__<server>_<tool>
)

// MaxToolName is the longest name model providers accept.
const MaxToolName = 64

// validToolName is what every provider accepts as a tool name. Regular
// expressions here are compiled on first use, not at package
// initialisation, which every process linking the runtime would pay.
var validToolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) })

// ValidToolName reports whether name is acceptable to model providers.
func ValidToolName(name string) bool { return validToolName().MatchString(name) }

// sanitize replaces every character providers refuse with '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// ServerPrefix returns the prefix a server's direct tools get in mode (""
// for PrefixNone), before sanitizing.
func ServerPrefix(server, mode string) string {
	switch mode {
	case PrefixNone:
		return ""
	case PrefixShort:
		for _, suffix := range []string{"-mcp", "_mcp"} {
			if s, ok := strings.CutSuffix(server, suffix); ok && s != "" {
				return s
			}
		}
		return server
	case PrefixMCP:
		return "mcp__" + server
	}
	return server
}

// DirectName returns the name a tool gets as a direct tool: prefix, '_',
// the tool's name with '.' as '_', every character providers refuse as '_',
// cut to MaxToolName. altered says whether sanitizing or cutting changed it
// (only such names get a hash suffix when they collide).
func DirectName(server, mode, tool string) (name string, altered bool) {
	raw := tool
	if p := ServerPrefix(server, mode); p != "" {
		raw = p + "_" + tool
	}
	name = sanitize(strings.ReplaceAll(raw, ".", "_"))
	altered = name != strings.ReplaceAll(raw, ".", "_")
	if len(name) > MaxToolName {
		name, altered = name[:MaxToolName], true
	}
	if name == "" {
		name, altered = "tool", true
	}
	return name, altered
}

// ResourceToolName returns the tool name of a resource exposed as a tool:
// read_<name>, sanitized.
func ResourceToolName(resource string) string {
	name := sanitize("read_" + strings.ToLower(resource))
	if len(name) > MaxToolName {
		name = name[:MaxToolName]
	}
	return name
}

// withHash gives name a deterministic suffix from the tool's identity,
// cutting name so that the result stays within MaxToolName.
func withHash(name, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:])[:6]
	if len(name)+len(suffix) > MaxToolName {
		name = name[:MaxToolName-len(suffix)]
	}
	return name + suffix
}

// Glob reports whether s matches pattern, where '*' matches any run of
// characters and '?' any one character; everything else is literal.
func Glob(pattern, s string) bool {
	p, n := []rune(pattern), []rune(s)
	pi, ni, star, mark := 0, 0, -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == n[ni]):
			pi++
			ni++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Exposed applies includeTools and excludeTools to one tool known by several
// names (its original name, its prefixed name, a resource tool's read_
// name): with an include list it must match one of them, and it must match
// no exclude pattern (exclude applies after include).
func Exposed(include, exclude []string, names ...string) bool {
	matches := func(patterns []string) bool {
		for _, p := range patterns {
			for _, n := range names {
				if n != "" && Glob(p, n) {
					return true
				}
			}
		}
		return false
	}
	if len(include) > 0 && !matches(include) {
		return false
	}
	return !matches(exclude)
}

// Candidate is one tool wanting a direct-tool name.
type Candidate struct {
	Server, Tool string
	// Name is DirectName's result; Altered its second result.
	Name    string
	Altered bool
}

// Skipped is a candidate that got no name, and why.
type Skipped struct {
	Candidate
	// Reason names the conflict, e.g. `the host has a tool named "read"`.
	Reason string
}

// AssignNames settles the final names of candidates, in order. Names that
// sanitizing or cutting produced and that collide with another get a
// deterministic hash suffix; a name that still collides with a reserved
// name (the host's tools, mcp) or with an earlier candidate is skipped and
// reported, never shadowed.
func AssignNames(cands []Candidate, reserved map[string]string) (named []Candidate, skipped []Skipped) {
	count := map[string]int{}
	for _, c := range cands {
		count[c.Name]++
	}
	taken := map[string]Candidate{}
	for _, c := range cands {
		if c.Altered && (count[c.Name] > 1 || reserved[c.Name] != "") {
			c.Name = withHash(c.Name, c.Server, c.Tool)
		}
		if who := reserved[c.Name]; who != "" {
			skipped = append(skipped, Skipped{c, "its name " + quoteName(c.Name) + " is " + who})
			continue
		}
		if prev, ok := taken[c.Name]; ok {
			skipped = append(skipped, Skipped{c, "its name " + quoteName(c.Name) + " is already used by " + prev.Server + "/" + prev.Tool})
			continue
		}
		taken[c.Name] = c
		named = append(named, c)
	}
	return named, skipped
}

func quoteName(s string) string { return `"` + s + `"` }
