package catalog

import (
	"strings"
	"unicode"
)

// indexTokens is Tokens for indexed text: a word written in camel case
// ("JavaScript") is indexed whole as well as in its parts, so that both
// "javascript" and "java script" find it.
func indexTokens(s string) []string {
	var out []string
	for _, run := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		parts := Tokens(run)
		out = append(out, parts...)
		if len(parts) > 1 {
			out = append(out, strings.ToLower(run))
		}
	}
	return out
}

// Tokens splits text into lower-case words: at every character that is not
// a letter or digit (so '-', '_', '.' and spaces all separate, and
// "resolve-library-id" and "resolve_library_id" give the same words), and
// at lower-to-upper case changes ("getFileInfo" is get, file, info).
func Tokens(s string) []string {
	var out []string
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(s[start:end]))
		}
		start = -1
	}
	for i, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !alnum:
			flush(i)
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		}
		prev = r
	}
	flush(len(s))
	return out
}

// Stem folds the common English inflections a query and a description
// disagree on (files/file, repositories/repository, commits/commit,
// thinking/think), so that they match. It is deliberately small: a
// stemmer that folds too much makes unrelated words meet.
func Stem(w string) string {
	s := stem(w)
	if full, ok := abbreviations[s]; ok {
		return full
	}
	return s
}

// abbreviations are the short forms tool names use for words their users
// spell out ("query-docs" for documentation, "get-env" for environment);
// both index and query fold them to the long form.
var abbreviations = map[string]string{
	"doc": "documentation", "repo": "repository", "dir": "directory", "env": "environment",
	"img": "image", "config": "configuration", "info": "information", "msg": "message",
	"db": "database", "param": "parameter", "arg": "argument",
}

func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return w[:n-3]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// stopwords are dropped from queries of more than one word: they carry no
// meaning for finding a tool and would only dilute the coverage rule.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "for": true, "in": true, "on": true,
	"at": true, "by": true, "with": true, "and": true, "or": true, "is": true, "it": true, "from": true,
	"as": true, "into": true, "my": true, "me": true, "i": true, "all": true, "some": true,
}

// NormalizeName folds the spellings a model mixes up in a tool name: case,
// and '-' versus '_'.
func NormalizeName(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "_")) }
