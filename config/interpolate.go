package config

import (
	"errors"
	"strings"
)

// The interpolation syntax of command, args, env values, cwd, url, headers,
// socket and bearerToken:
//
//	${NAME}          the variable's value; an error when it is not set
//	${NAME:-text}    the variable's value, or text when it is not set (an
//	                 empty value is kept: the default is only for "unset")
//	${env:NAME}      the same as ${NAME} (Cursor's, VS Code's and
//	                 Windsurf's spelling)
//	$env:NAME        the same as ${NAME}; NAME is the longest run of
//	                 letters, digits and '_'
//	$${  $$env:      a literal "${" and a literal "$env:"
//
// NAME starts with a letter or '_' and continues with letters, digits and
// '_'. Any other '$' is literal: "$HOME" stays "$HOME", and "$$" stays "$$"
// (shell snippets in args often use it). The default text is taken
// literally (it is not expanded again) and cannot contain '}'. Expansion is
// a single pass: a value that contains "${" is not expanded again.

// errTemplate is the one syntax error a template can have; its message
// never quotes the template.
var errTemplate = errors.New("malformed variable reference (use ${NAME}, ${NAME:-default} or $env:NAME, and $${ for a literal ${)")

// ref is one variable reference found in a template.
type ref struct {
	name     string
	def      string
	hasDef   bool
	from, to int // the reference's byte range in the template
}

// scanTemplate finds every variable reference of s, or errTemplate.
// Escapes ("$${", "$$env:") are reported as references with an empty name
// covering their first '$', which is dropped.
func scanTemplate(s string) ([]ref, error) {
	var refs []ref
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		switch {
		case s[i+1] == '$':
			if rest := s[i+2:]; strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, "env:") {
				refs = append(refs, ref{from: i, to: i + 1})
				i += 2 // the escaped "${" or "$env:" is literal text
			}
		case s[i+1] == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return nil, errTemplate
			}
			r, ok := parseBraced(s[i+2 : i+2+end])
			if !ok {
				return nil, errTemplate
			}
			r.from, r.to = i, i+2+end+1
			refs = append(refs, r)
			i = r.to - 1
		case strings.HasPrefix(s[i+1:], "env:"):
			n := identLen(s[i+5:])
			if n == 0 || !identStart(s[i+5]) {
				continue // "$env:" followed by no name is literal text
			}
			refs = append(refs, ref{name: s[i+5 : i+5+n], from: i, to: i + 5 + n})
			i += 4 + n
		}
	}
	return refs, nil
}

// parseBraced reads what is between "${" and "}".
func parseBraced(inner string) (ref, bool) {
	if rest, ok := strings.CutPrefix(inner, "env:"); ok {
		if !isIdent(rest) {
			return ref{}, false
		}
		return ref{name: rest}, true
	}
	n := identLen(inner)
	if n == 0 || !identStart(inner[0]) {
		return ref{}, false
	}
	name, rest := inner[:n], inner[n:]
	switch {
	case rest == "":
		return ref{name: name}, true
	case strings.HasPrefix(rest, ":-"):
		return ref{name: name, def: rest[2:], hasDef: true}, true
	}
	return ref{}, false
}

func identStart(b byte) bool { return b == '_' || (b|0x20 >= 'a' && b|0x20 <= 'z') }

func identLen(s string) int {
	n := 0
	for n < len(s) {
		b := s[n]
		if !identStart(b) && (b < '0' || b > '9') {
			break
		}
		n++
	}
	return n
}

func isIdent(s string) bool { return s != "" && identStart(s[0]) && identLen(s) == len(s) }

// checkTemplate reports whether s is a well-formed template.
func checkTemplate(s string) error {
	_, err := scanTemplate(s)
	return err
}

// hasRefs reports whether s contains a variable reference (not just an
// escape).
func hasRefs(s string) bool {
	refs, err := scanTemplate(s)
	if err != nil {
		return true
	}
	for _, r := range refs {
		if r.name != "" {
			return true
		}
	}
	return false
}

// expand interpolates s. missing reports that a variable without a default
// was not set (it expands to ""); err is errTemplate for a malformed s.
func expand(s string, lookup func(string) (string, bool)) (out string, missing bool, err error) {
	refs, err := scanTemplate(s)
	if err != nil {
		return "", false, err
	}
	if len(refs) == 0 {
		return s, false, nil
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		b.WriteString(s[last:r.from])
		last = r.to
		if r.name == "" {
			continue // an escape: its first '$' is dropped
		}
		v, ok := lookup(r.name)
		switch {
		case ok:
			b.WriteString(v)
		case r.hasDef:
			b.WriteString(r.def)
		default:
			missing = true
		}
	}
	b.WriteString(s[last:])
	return b.String(), missing, nil
}

// placeholder expands s with every variable set to a short harmless word,
// for checks of a template's shape (a URL's scheme and host) before the
// environment is known.
func placeholder(s string) string {
	out, _, err := expand(s, func(string) (string, bool) { return "x", true })
	if err != nil {
		return s
	}
	return out
}

// escapeDollars makes a literal string safe to use as a template: every
// "${" and "$env:" gets an escaping '$'.
func escapeDollars(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && (strings.HasPrefix(s[i+1:], "{") || strings.HasPrefix(s[i+1:], "env:")) {
			b.WriteByte('$')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
