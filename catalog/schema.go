package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Schema dialects.
const (
	// Dialect2020 is JSON Schema 2020-12, MCP's default dialect.
	Dialect2020 = "https://json-schema.org/draft/2020-12/schema"
	dialectNone = ""
	dialect07   = "draft-07"
	dialectMisc = "other"
)

// Rejection codes: why a tool's input schema is not offered to a model
// provider. They are stable identifiers.
const (
	CodeUnsupportedDialect = "unsupported-dialect"   // $schema names neither draft-07 nor 2020-12
	CodeDraft07Reference   = "draft07-reference"     // $ref, $id or definitions in a draft-07 schema
	CodeDraft07Keyword     = "draft07-keyword"       // a draft-07 keyword outside the supported subset
	CodeDraft07Tuple       = "draft07-tuple-items"   // items as an array (tuple validation)
	CodeMultipleOf         = "multiple-of"           // multipleOf (inexact in many validators)
	CodeUniqueItems        = "unique-items"          // uniqueItems: true
	CodeArrayLiteral       = "array-literal"         // const or enum holding an array
	CodeBackreference      = "pattern-backreference" // a numeric backreference in a pattern
	CodePrototypeName      = "prototype-property"    // a property named like Object.prototype's members
	CodeNotObject          = "not-object"            // the top level does not describe an object
	CodeInvalidSchema      = "invalid-schema"        // not a valid schema of its dialect
	CodeSchemaTooLarge     = "schema-too-large"      // over MaxSchemaBytes or MaxSchemaDepth
)

// Rejection says why an input schema cannot be offered. Message never
// quotes the schema.
type Rejection struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (r *Rejection) Error() string { return r.Code + ": " + r.Message }

func reject(code, format string, args ...any) *Rejection {
	return &Rejection{Code: code, Message: fmt.Sprintf(format, args...)}
}

// emptyObjectSchema is what a tool without an input schema takes.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// dialectOf classifies a $schema value.
func dialectOf(s string) string {
	switch strings.TrimSuffix(s, "#") {
	case "":
		return dialectNone
	case "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema":
		return dialect07
	case Dialect2020, "http://json-schema.org/draft/2020-12/schema":
		return Dialect2020
	}
	return dialectMisc
}

// draft07Keywords is the supported draft-07 subset: what means the same in
// 2020-12 and what common validators implement exactly.
var draft07Keywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "title": true, "description": true, "default": true, "examples": true,
	"$comment": true, "minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "pattern": true, "minItems": true, "maxItems": true,
	"minProperties": true, "maxProperties": true, "patternProperties": true, "propertyNames": true,
	"anyOf": true, "oneOf": true, "allOf": true, "not": true, "readOnly": true, "writeOnly": true,
	"uniqueItems": true,
}

// prototypeNames are property names that collide with JavaScript's
// Object.prototype in validators hosts commonly use.
var prototypeNames = map[string]bool{
	"__proto__": true, "constructor": true, "toString": true, "valueOf": true, "hasOwnProperty": true,
	"isPrototypeOf": true, "propertyIsEnumerable": true, "toLocaleString": true,
	"__defineGetter__": true, "__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true,
}

// backreference finds \1..\9 not preceded by an escaping backslash
// (compiled on first use).
var backreference = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[^\\])(\\\\)*\\[1-9]`) })

// CheckInputSchema decides whether a tool's input schema can be offered to
// a model provider as a direct tool, and returns the schema to offer. A
// missing schema becomes an empty object schema; a schema without $schema or
// with 2020-12 must compile as 2020-12 and describe an object; a draft-07
// schema must stay within a conservative subset and is normalized to
// 2020-12 (its $schema is dropped, since the rest means the same there);
// anything else is rejected with a coded reason.
func CheckInputSchema(raw json.RawMessage) (json.RawMessage, *Rejection) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return emptyObjectSchema, nil
	}
	if err := CheckSchemaSize(raw); err != nil {
		return nil, reject(CodeSchemaTooLarge, "the input schema %s", err)
	}
	var top map[string]any
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, reject(CodeNotObject, "the input schema is not a JSON object")
	}
	if t, ok := top["type"]; ok && t != "object" {
		return nil, reject(CodeNotObject, "the input schema does not describe an object")
	}
	dialect, _ := top["$schema"].(string)
	switch dialectOf(dialect) {
	case dialectMisc:
		return nil, reject(CodeUnsupportedDialect, "the input schema's dialect is neither draft-07 nor 2020-12")
	case dialect07:
		if rej := checkDraft07(top, "", true); rej != nil {
			return nil, rej
		}
		delete(top, "$schema")
	}
	if _, err := compileSchema(raw); err != nil {
		return nil, reject(CodeInvalidSchema, "the input schema is not a valid JSON Schema")
	}
	if _, ok := top["type"]; !ok || dialectOf(dialect) == dialect07 {
		top["type"] = "object"
		out, err := json.Marshal(top)
		if err != nil {
			return nil, reject(CodeInvalidSchema, "the input schema cannot be encoded")
		}
		return out, nil
	}
	return raw, nil
}

// checkDraft07 walks one draft-07 schema object.
func checkDraft07(node map[string]any, path string, top bool) *Rejection {
	keys := make([]string, 0, len(node))
	for k := range node {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	at := func() string {
		if path == "" {
			return "at the top level"
		}
		return "at " + path
	}
	for _, k := range keys {
		v := node[k]
		switch {
		case k == "$schema" && top:
		case k == "$ref" || k == "$id" || k == "definitions" || k == "$defs":
			return reject(CodeDraft07Reference, "draft-07 references (%s) are not supported (%s)", k, at())
		case k == "multipleOf":
			return reject(CodeMultipleOf, "multipleOf is not supported (%s)", at())
		case k == "uniqueItems":
			if v == true {
				return reject(CodeUniqueItems, "uniqueItems: true is not supported (%s)", at())
			}
		case !draft07Keywords[k]:
			return reject(CodeDraft07Keyword, "the draft-07 keyword %q is not supported (%s)", safeKeyword(k), at())
		}
		switch k {
		case "properties", "patternProperties":
			m, ok := v.(map[string]any)
			if !ok {
				return reject(CodeInvalidSchema, "%s must be an object (%s)", k, at())
			}
			for name, sub := range m {
				if k == "properties" && prototypeNames[name] {
					return reject(CodePrototypeName, "a property is named like a JavaScript prototype member (%s)", at())
				}
				if k == "patternProperties" && backreference().MatchString(name) {
					return reject(CodeBackreference, "a patternProperties pattern uses a numeric backreference (%s)", at())
				}
				if rej := subschema(sub, path+"/"+k+"/*"); rej != nil {
					return rej
				}
			}
		case "required":
			list, _ := v.([]any)
			for _, n := range list {
				if s, _ := n.(string); prototypeNames[s] {
					return reject(CodePrototypeName, "a required property is named like a JavaScript prototype member (%s)", at())
				}
			}
		case "items":
			if _, tuple := v.([]any); tuple {
				return reject(CodeDraft07Tuple, "tuple items (an array of schemas) are not supported (%s)", at())
			}
			if rej := subschema(v, path+"/items"); rej != nil {
				return rej
			}
		case "additionalProperties", "not", "propertyNames":
			if rej := subschema(v, path+"/"+k); rej != nil {
				return rej
			}
		case "anyOf", "oneOf", "allOf":
			list, ok := v.([]any)
			if !ok {
				return reject(CodeInvalidSchema, "%s must be an array (%s)", k, at())
			}
			for i, sub := range list {
				if rej := subschema(sub, fmt.Sprintf("%s/%s/%d", path, k, i)); rej != nil {
					return rej
				}
			}
		case "enum", "const":
			if holdsArray(v, k == "enum") {
				return reject(CodeArrayLiteral, "%s holds an array literal (%s)", k, at())
			}
		case "pattern":
			if s, _ := v.(string); backreference().MatchString(s) {
				return reject(CodeBackreference, "a pattern uses a numeric backreference (%s)", at())
			}
		}
	}
	return nil
}

func subschema(v any, path string) *Rejection {
	switch s := v.(type) {
	case bool:
		return nil
	case map[string]any:
		if _, ok := s["$schema"]; ok {
			return reject(CodeDraft07Reference, "a nested $schema is not supported (at %s)", path)
		}
		return checkDraft07(s, path, false)
	}
	return reject(CodeInvalidSchema, "a subschema is neither an object nor a boolean (at %s)", path)
}

// holdsArray reports whether a literal contains an array anywhere; for enum
// the outer array itself is the list of values and does not count.
func holdsArray(v any, isEnum bool) bool {
	switch x := v.(type) {
	case []any:
		if !isEnum {
			return true
		}
		for _, e := range x {
			if holdsArray(e, false) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if holdsArray(e, false) {
				return true
			}
		}
	}
	return false
}

// safeKeyword keeps a keyword name printable and short in diagnostics.
func safeKeyword(k string) string {
	if len(k) > 40 {
		k = k[:40]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, k)
}
