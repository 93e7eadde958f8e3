package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// A validation failure reaches the model, so it is said in words: where in
// the value (a JSON Pointer, "/" for the whole value) and what was expected
// there, e.g. `/n: expected integer, got string`. The library decides
// whether a value is valid; its error text quotes values and schemas in Go
// syntax, so the words come from a walk of our own that finds the first
// failing keyword of the common kinds. When the walk finds none (the
// failure is under a $ref, an if/then or a similar construct), the text
// names the library's failing keyword and where it sits in the schema.

// maxFailureText bounds the one line a failure becomes.
const maxFailureText = 300

// describeFailure says, in one line of words, why inst does not satisfy s.
func describeFailure(s *jsonschema.Schema, inst any, libErr error) string {
	msg, ok := explain(s, inst, "")
	if !ok {
		msg = fallbackFailure(libErr)
	}
	msg = CleanText(msg)
	if len(msg) > maxFailureText {
		cut := maxFailureText
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// explain returns the first failure it can name in words, or false.
func explain(s *jsonschema.Schema, v any, at string) (string, bool) {
	if s == nil {
		return "", false
	}
	where := at
	if where == "" {
		where = "/"
	}
	fail := func(format string, args ...any) (string, bool) {
		return where + ": " + fmt.Sprintf(format, args...), true
	}
	got := jsonTypeOf(v)
	if want := typesOf(s); len(want) > 0 && !typeMatches(want, v) {
		return fail("expected %s, got %s", strings.Join(want, " or "), got)
	}
	if len(s.Enum) > 0 && !anyEqual(s.Enum, v) {
		return fail("expected one of %s, got %s", literal(s.Enum), literal(v))
	}
	if s.Const != nil && !jsonEqual(*s.Const, v) {
		return fail("expected the value %s, got %s", literal(*s.Const), literal(v))
	}
	switch x := v.(type) {
	case float64:
		switch {
		case s.Minimum != nil && x < *s.Minimum:
			return fail("%s is less than the minimum %s", literal(x), literal(*s.Minimum))
		case s.Maximum != nil && x > *s.Maximum:
			return fail("%s is more than the maximum %s", literal(x), literal(*s.Maximum))
		case s.ExclusiveMinimum != nil && x <= *s.ExclusiveMinimum:
			return fail("%s is not more than %s", literal(x), literal(*s.ExclusiveMinimum))
		case s.ExclusiveMaximum != nil && x >= *s.ExclusiveMaximum:
			return fail("%s is not less than %s", literal(x), literal(*s.ExclusiveMaximum))
		case s.MultipleOf != nil && *s.MultipleOf > 0 && math.Mod(x, *s.MultipleOf) != 0:
			return fail("%s is not a multiple of %s", literal(x), literal(*s.MultipleOf))
		}
	case string:
		n := utf8.RuneCountInString(x)
		switch {
		case s.MinLength != nil && n < *s.MinLength:
			return fail("expected at least %d characters, got %d", *s.MinLength, n)
		case s.MaxLength != nil && n > *s.MaxLength:
			return fail("expected at most %d characters, got %d", *s.MaxLength, n)
		case s.Pattern != "":
			if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(x) {
				return fail("the string does not match the pattern %s", literal(s.Pattern))
			}
		}
	case []any:
		switch {
		case s.MinItems != nil && len(x) < *s.MinItems:
			return fail("expected at least %d items, got %d", *s.MinItems, len(x))
		case s.MaxItems != nil && len(x) > *s.MaxItems:
			return fail("expected at most %d items, got %d", *s.MaxItems, len(x))
		}
		for i, e := range x {
			sub := s.Items
			if i < len(s.PrefixItems) {
				sub = s.PrefixItems[i]
			} else if i < len(s.ItemsArray) {
				sub = s.ItemsArray[i]
			} else if len(s.ItemsArray) > 0 {
				sub = s.AdditionalItems
			}
			if isFalse(sub) {
				return fail("expected at most %d items, got %d", i, len(x))
			}
			if m, ok := explain(sub, e, fmt.Sprintf("%s/%d", at, i)); ok {
				return m, true
			}
		}
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				return fail("missing the required property %s", literal(name))
			}
		}
		switch {
		case s.MinProperties != nil && len(x) < *s.MinProperties:
			return fail("expected at least %d properties, got %d", *s.MinProperties, len(x))
		case s.MaxProperties != nil && len(x) > *s.MaxProperties:
			return fail("expected at most %d properties, got %d", *s.MaxProperties, len(x))
		}
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			sub, declared := s.Properties[k]
			if !declared {
				for p, ps := range s.PatternProperties {
					if re, err := regexp.Compile(p); err == nil && re.MatchString(k) {
						sub, declared = ps, true
						break
					}
				}
			}
			if !declared {
				if isFalse(s.AdditionalProperties) {
					return fail("unexpected property %s", literal(k))
				}
				sub = s.AdditionalProperties
			}
			if m, ok := explain(sub, x[k], at+"/"+pointerToken(k)); ok {
				return m, true
			}
		}
	}
	for _, sub := range s.AllOf {
		if m, ok := explain(sub, v, at); ok {
			return m, true
		}
	}
	if len(s.AnyOf) > 0 && noneMatches(s.AnyOf, v, at) {
		return fail("matches none of the %d alternatives (anyOf)", len(s.AnyOf))
	}
	if len(s.OneOf) > 0 && noneMatches(s.OneOf, v, at) {
		return fail("matches none of the %d alternatives (oneOf)", len(s.OneOf))
	}
	return "", false
}

// noneMatches reports whether the walk can name a failure for every
// alternative.
func noneMatches(alts []*jsonschema.Schema, v any, at string) bool {
	for _, a := range alts {
		if _, failed := explain(a, v, at); !failed {
			return false
		}
	}
	return true
}

// fallbackFailure names the library's innermost failing keyword and its
// place in the schema, never the values it quotes.
func fallbackFailure(err error) string {
	text := err.Error()
	place := "the top level"
	for {
		i := strings.Index(text, "validating ")
		if i < 0 {
			break
		}
		rest := text[i+len("validating "):]
		j := strings.Index(rest, ": ")
		if j < 0 {
			break
		}
		if p := rest[:j]; p != "root" && strings.HasPrefix(p, "/") {
			place = "schema location " + p
		}
		text = rest[j+2:]
	}
	kw := text
	if i := strings.IndexAny(kw, ":[ "); i >= 0 {
		kw = kw[:i]
	}
	for _, r := range kw {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			kw = ""
			break
		}
	}
	if kw == "" {
		return "the value does not satisfy the schema (at " + place + ")"
	}
	return fmt.Sprintf("the value fails the schema's %s rule (at %s)", kw, place)
}

// typesOf returns a schema's type names.
func typesOf(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// typeMatches reports whether v has one of the types.
func typeMatches(want []string, v any) bool {
	got := jsonTypeOf(v)
	for _, w := range want {
		if w == got || w == "number" && got == "integer" {
			return true
		}
	}
	return false
}

// jsonTypeOf names a decoded JSON value's type; a number without a fraction
// is an integer.
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// isFalse reports whether s is the schema false (the library decodes it
// as {"not": {}}).
func isFalse(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

func anyEqual(list []any, v any) bool {
	for _, e := range list {
		if jsonEqual(e, v) {
			return true
		}
	}
	return false
}

// jsonEqual compares two decoded JSON values by their canonical encoding.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// literal renders a value as JSON, short.
func literal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "a value"
	}
	if len(b) > 80 {
		return string(b[:77]) + "…"
	}
	return string(b)
}

// pointerToken escapes one JSON Pointer reference token (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
