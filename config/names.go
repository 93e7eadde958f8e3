package config

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLength is the longest server name, in characters.
const MaxNameLength = 64

// nameRule is how diagnostics describe a valid server name.
const nameRule = "invalid server name (use 1 to 64 printable characters: no control or invisible characters, no line breaks, no leading or trailing space, not starting with '#')"

// ValidName reports whether name is a usable server name: 1 to
// MaxNameLength characters of valid UTF-8, none of them a control character
// (C0, DEL, C1), an invisible format character (bidirectional overrides,
// zero-width characters), a line or paragraph separator, or whitespace
// other than the plain space; no leading or trailing space; not starting
// with '#' (which diagnostics use for an entry's position). Every name the
// common hosts accept for a server ("GitHub", "Context7", "my server",
// "github.com/org/repo", "@scope/pkg") is valid; the names a terminal or a
// log could be fooled by are not. A name is compared exactly: "GitHub" and
// "github" are two servers.
func ValidName(name string) bool {
	if name == "" || len(name) > 4*MaxNameLength || !utf8.ValidString(name) ||
		name[0] == '#' || name[0] == ' ' || name[len(name)-1] == ' ' {
		return false
	}
	n := 0
	for _, r := range name {
		n++
		switch {
		case r == ' ':
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.IsSpace(r),
			unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r), r == utf8.RuneError:
			return false
		}
	}
	return n <= MaxNameLength
}

// ToolPrefix is the provider-valid form of a server name, which its direct
// tools' names start with (toolPrefix "server", the default): every
// character other than ASCII letters, digits, '_' and '-' becomes '_'
// ("GitHub" stays "GitHub", "my server" and "my.server" become
// "my_server", "Café" becomes "Caf_"). The catalog applies the same mapping
// when it names direct tools (catalog.DirectName).
func ToolPrefix(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

// prefixFor is the tool prefix a server's direct tools get in mode
// (toolPrefix), "" when they get none.
func prefixFor(name, mode string) string {
	switch mode {
	case "none":
		return ""
	case "short":
		for _, suffix := range []string{"-mcp", "_mcp"} {
			if s, ok := strings.CutSuffix(name, suffix); ok && s != "" {
				return ToolPrefix(s)
			}
		}
	case "mcp":
		return "mcp__" + ToolPrefix(name)
	}
	return ToolPrefix(name)
}

// prefixCollisions reports the enabled servers whose tool prefixes are the
// same ("my server" and "my_server"), naming both: their direct tools'
// names would clash (the catalog then tells them apart by a hash suffix)
// and a model cannot tell from a prefixed tool name which server is meant.
func prefixCollisions(servers []Server, defaultMode string) []Issue {
	by := map[string][]string{}
	var order []string
	for _, s := range servers {
		if s.Disabled {
			continue
		}
		mode := s.ToolPrefix
		if mode == "" {
			mode = defaultMode
		}
		p := prefixFor(s.Name, mode)
		if p == "" {
			continue
		}
		if _, seen := by[p]; !seen {
			order = append(order, p)
		}
		by[p] = append(by[p], s.Name)
	}
	var issues []Issue
	for _, p := range order {
		names := by[p]
		if len(names) < 2 {
			continue
		}
		sort.Strings(names)
		for _, other := range names[1:] {
			issues = append(issues, Issue{Server: names[0], Message: fmt.Sprintf(
				"has the same tool prefix %q as server %q: rename one of them, or give one a toolPrefix, so their direct tools' names differ",
				p, other)})
		}
	}
	return issues
}
