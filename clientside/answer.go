package clientside

import (
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Check checks one value against the field and returns it in the form it
// is sent: a string, a float64 number (whole for integers), a bool, or a
// []string for a multi-select. The error says what is wrong, in words.
func (f Field) Check(v any) (any, error) {
	switch f.Kind {
	case KindString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("expected a string, got %s", jsonType(v))
		}
		n := utf8.RuneCountInString(s)
		if f.MinLength >= 0 && n < f.MinLength {
			return nil, fmt.Errorf("is %d characters, at least %d are needed", n, f.MinLength)
		}
		if f.MaxLength >= 0 && n > f.MaxLength {
			return nil, fmt.Errorf("is %d characters, at most %d are allowed", n, f.MaxLength)
		}
		if err := checkFormat(f.Format, s); err != nil {
			return nil, err
		}
		return s, nil
	case KindNumber, KindInteger:
		n, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("expected %s, got %s", article(f.Kind), jsonType(v))
		}
		if f.Kind == KindInteger && !isInteger(n) {
			return nil, fmt.Errorf("expected an integer, got %v", n)
		}
		if f.Minimum != nil && n < *f.Minimum {
			return nil, fmt.Errorf("is %v, at least %v is needed", n, *f.Minimum)
		}
		if f.Maximum != nil && n > *f.Maximum {
			return nil, fmt.Errorf("is %v, at most %v is allowed", n, *f.Maximum)
		}
		return n, nil
	case KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("expected true or false, got %s", jsonType(v))
		}
		return b, nil
	case KindEnum:
		s, ok := v.(string)
		if !ok || !f.hasOption(s) {
			return nil, fmt.Errorf("expected one of %s, got %s", f.optionList(), shown(v))
		}
		return s, nil
	case KindMulti:
		items, ok := v.([]any)
		if !ok {
			if ss, isStrings := v.([]string); isStrings {
				for _, s := range ss {
					items = append(items, s)
				}
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("expected a list of choices, got %s", jsonType(v))
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			s, isString := it.(string)
			if !isString || !f.hasOption(s) {
				return nil, fmt.Errorf("expected choices among %s, got %s", f.optionList(), shown(it))
			}
			if slices.Contains(out, s) {
				return nil, fmt.Errorf("chooses %q twice", s)
			}
			out = append(out, s)
		}
		if f.MinItems >= 0 && len(out) < f.MinItems {
			return nil, fmt.Errorf("has %d choices, at least %d are needed", len(out), f.MinItems)
		}
		if f.MaxItems >= 0 && len(out) > f.MaxItems {
			return nil, fmt.Errorf("has %d choices, at most %d are allowed", len(out), f.MaxItems)
		}
		return out, nil
	}
	return nil, fmt.Errorf("has an unknown kind %q", f.Kind)
}

// AnswerError says why a host's answer does not fit the form.
type AnswerError struct {
	Field  string
	Reason string
}

func (e *AnswerError) Error() string { return fmt.Sprintf("field %q %s", e.Field, e.Reason) }

// Complete checks an accepted answer against the form and returns the
// content to send: every field the host gave, checked and normalised, plus
// the schema's default for every field it left out (SEP-1034). A field the
// form does not have, a value that does not fit, or a required field with
// neither a value nor a default is an error naming the field.
func (f Form) Complete(content map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(f.Fields))
	known := map[string]bool{}
	for _, fd := range f.Fields {
		known[fd.Name] = true
		v, given := content[fd.Name]
		if !given || v == nil {
			switch {
			case fd.Default != nil:
				out[fd.Name] = fd.Default
			case fd.Required:
				return nil, &AnswerError{Field: fd.Name, Reason: "is required"}
			}
			continue
		}
		nv, err := fd.Check(v)
		if err != nil {
			return nil, &AnswerError{Field: fd.Name, Reason: err.Error()}
		}
		out[fd.Name] = nv
	}
	var unknown []string
	for k := range content {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &AnswerError{Field: unknown[0], Reason: "is not a field of the form"}
	}
	return out, nil
}

// Defaults returns the answer made of the schema's defaults alone, the
// answer of a host that accepts every default; an error names the first
// required field without a default.
func (f Form) Defaults() (map[string]any, error) { return f.Complete(map[string]any{}) }

func (f Field) hasOption(s string) bool {
	for _, o := range f.Options {
		if o.Value == s {
			return true
		}
	}
	return false
}

func (f Field) optionList() string {
	vals := make([]string, 0, len(f.Options))
	for _, o := range f.Options {
		vals = append(vals, fmt.Sprintf("%q", o.Value))
	}
	return strings.Join(vals, ", ")
}

func checkFormat(format, s string) error {
	var err error
	switch format {
	case "email":
		var a *mail.Address
		if a, err = mail.ParseAddress(s); err == nil && a.Address != s {
			err = fmt.Errorf("not a bare address")
		}
	case "uri":
		var u *url.URL
		if u, err = url.Parse(s); err == nil && !u.IsAbs() {
			err = fmt.Errorf("not absolute")
		}
	case "date":
		_, err = time.Parse(time.DateOnly, s)
	case "date-time":
		_, err = time.Parse(time.RFC3339, s)
	}
	if err != nil {
		return fmt.Errorf("is not a valid %s", format)
	}
	return nil
}

func article(k FieldKind) string {
	if k == KindInteger {
		return "an integer"
	}
	return "a number"
}

// jsonType names a decoded JSON value's type in words.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func shown(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return jsonType(v)
}
