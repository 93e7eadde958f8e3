package clientside

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// FieldKind is the kind of one form field.
type FieldKind string

// The field kinds of the 2025-11-25 elicitation schema.
const (
	KindString  FieldKind = "string"
	KindNumber  FieldKind = "number"
	KindInteger FieldKind = "integer"
	KindBoolean FieldKind = "boolean"
	// KindEnum is a single choice among Options.
	KindEnum FieldKind = "enum"
	// KindMulti is any number of choices among Options (a JSON array).
	KindMulti FieldKind = "multi"
)

// Option is one choice of an enum field: the value sent, and the title a
// person reads (the value itself when the schema gives none).
type Option struct {
	Value string
	Title string
}

// Field is one property of a form.
type Field struct {
	Name        string
	Kind        FieldKind
	Title       string
	Description string
	Required    bool
	// Format is the string format: "", "email", "uri", "date" or
	// "date-time".
	Format string
	// MinLength and MaxLength bound a string (-1: no bound).
	MinLength, MaxLength int
	// Minimum and Maximum bound a number (nil: no bound).
	Minimum, Maximum *float64
	// MinItems and MaxItems bound a multi-select (-1: no bound).
	MinItems, MaxItems int
	// Options are an enum's or multi-select's choices, in schema order.
	Options []Option
	// Default is the schema's default, already checked against the
	// field; nil when there is none.
	Default any
}

// Form is a checked form-mode schema: its fields in name order.
type Form struct {
	Fields []Field
}

// SchemaError says why a requested schema is outside what the
// specification allows.
type SchemaError struct {
	// Field is the property at fault, "" for the schema itself.
	Field  string
	Reason string
}

func (e *SchemaError) Error() string {
	if e.Field == "" {
		return "requested schema: " + e.Reason
	}
	return fmt.Sprintf("requested schema: property %q: %s", e.Field, e.Reason)
}

// annotations are the keywords a field may carry besides the ones it
// uses: they change nothing a client checks.
var annotations = map[string]bool{"$comment": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true}

// ParseForm checks a requestedSchema and returns its form.
func ParseForm(raw json.RawMessage) (Form, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return Form{}, &SchemaError{Reason: "not a JSON object"}
	}
	var typ string
	if err := json.Unmarshal(top["type"], &typ); err != nil || typ != "object" {
		return Form{}, &SchemaError{Reason: `"type" must be "object"`}
	}
	for k := range top {
		switch k {
		case "type", "properties", "required", "$schema", "title", "description":
		default:
			if !annotations[k] {
				return Form{}, &SchemaError{Reason: fmt.Sprintf("keyword %q is not allowed at the top level", k)}
			}
		}
	}
	var props map[string]json.RawMessage
	if p, ok := top["properties"]; ok {
		if err := json.Unmarshal(p, &props); err != nil {
			return Form{}, &SchemaError{Reason: `"properties" must be an object`}
		}
	}
	var required []string
	if r, ok := top["required"]; ok {
		if err := json.Unmarshal(r, &required); err != nil {
			return Form{}, &SchemaError{Reason: `"required" must be an array of property names`}
		}
	}
	req := map[string]bool{}
	for _, name := range required {
		if _, ok := props[name]; !ok {
			return Form{}, &SchemaError{Field: name, Reason: "is required but not a property"}
		}
		req[name] = true
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	form := Form{Fields: make([]Field, 0, len(names))}
	for _, name := range names {
		f, err := parseField(name, props[name])
		if err != nil {
			return Form{}, err
		}
		f.Required = req[name]
		form.Fields = append(form.Fields, f)
	}
	return form, nil
}

// fieldSchema is every keyword a primitive field may use.
type fieldSchema struct {
	Type        *string         `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Format      string          `json:"format"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []titledConst   `json:"oneOf"`
	Items       *itemsSchema    `json:"items"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Default     json.RawMessage `json:"default"`
}

type titledConst struct {
	Const *string `json:"const"`
	Title string  `json:"title"`
}

type itemsSchema struct {
	Type  string        `json:"type"`
	Enum  []string      `json:"enum"`
	AnyOf []titledConst `json:"anyOf"`
}

// fieldKeys are the keywords fieldSchema reads.
var fieldKeys = map[string]bool{
	"type": true, "title": true, "description": true, "minLength": true, "maxLength": true, "format": true,
	"minimum": true, "maximum": true, "enum": true, "enumNames": true, "oneOf": true, "items": true,
	"minItems": true, "maxItems": true, "default": true,
}

var formats = map[string]bool{"": true, "email": true, "uri": true, "date": true, "date-time": true}

func parseField(name string, raw json.RawMessage) (Field, error) {
	bad := func(format string, args ...any) (Field, error) {
		return Field{}, &SchemaError{Field: name, Reason: fmt.Sprintf(format, args...)}
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		return bad("not a JSON object")
	}
	if string(keys["type"]) == `"object"` {
		return bad("nested objects are not allowed in an elicitation form")
	}
	for k := range keys {
		if !fieldKeys[k] && !annotations[k] {
			return bad("keyword %q is not allowed in an elicitation form", k)
		}
	}
	var s fieldSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return bad("malformed: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if s.Type == nil {
		return bad(`has no "type"`)
	}
	f := Field{Name: name, Title: s.Title, Description: s.Description, MinLength: -1, MaxLength: -1, MinItems: -1, MaxItems: -1}
	switch *s.Type {
	case "string":
		switch {
		case len(s.OneOf) > 0:
			f.Kind = KindEnum
			for i, o := range s.OneOf {
				if o.Const == nil {
					return bad("oneOf[%d] has no string const", i)
				}
				f.Options = append(f.Options, Option{Value: *o.Const, Title: titleOr(o.Title, *o.Const)})
			}
		case s.Enum != nil:
			f.Kind = KindEnum
			if s.EnumNames != nil && len(s.EnumNames) != len(s.Enum) {
				return bad("enumNames has %d names for %d values", len(s.EnumNames), len(s.Enum))
			}
			for i, v := range s.Enum {
				title := v
				if s.EnumNames != nil {
					title = titleOr(s.EnumNames[i], v)
				}
				f.Options = append(f.Options, Option{Value: v, Title: title})
			}
		default:
			f.Kind = KindString
			if !formats[s.Format] {
				return bad("format %q is not one of email, uri, date, date-time", s.Format)
			}
			f.Format = s.Format
			f.MinLength, f.MaxLength = intOr(s.MinLength), intOr(s.MaxLength)
		}
		if f.Kind == KindEnum && len(f.Options) == 0 {
			return bad("an enum with no values")
		}
	case "number", "integer":
		f.Kind = FieldKind(*s.Type)
		f.Minimum, f.Maximum = s.Minimum, s.Maximum
	case "boolean":
		f.Kind = KindBoolean
	case "array":
		f.Kind = KindMulti
		if s.Items == nil {
			return bad(`an array needs "items" with string enum values`)
		}
		switch {
		case len(s.Items.AnyOf) > 0:
			for i, o := range s.Items.AnyOf {
				if o.Const == nil {
					return bad("items.anyOf[%d] has no string const", i)
				}
				f.Options = append(f.Options, Option{Value: *o.Const, Title: titleOr(o.Title, *o.Const)})
			}
		case s.Items.Type == "string" && len(s.Items.Enum) > 0:
			for _, v := range s.Items.Enum {
				f.Options = append(f.Options, Option{Value: v, Title: v})
			}
		default:
			return bad("an array may only be a multi-select of string enum values")
		}
		f.MinItems, f.MaxItems = intOr(s.MinItems), intOr(s.MaxItems)
	default:
		return bad("type %q is not allowed (string, number, integer, boolean, or an array of enum values)", *s.Type)
	}
	if len(s.Default) > 0 && string(s.Default) != "null" {
		var v any
		if err := json.Unmarshal(s.Default, &v); err != nil {
			return bad("malformed default")
		}
		v, err := f.Check(v)
		if err != nil {
			return bad("its default %s", err.Error())
		}
		f.Default = v
	}
	return f, nil
}

func titleOr(title, value string) string {
	if title == "" {
		return value
	}
	return title
}

func intOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// isInteger tells whether a JSON number is a whole number.
func isInteger(n float64) bool { return n == math.Trunc(n) && !math.IsInf(n, 0) }
