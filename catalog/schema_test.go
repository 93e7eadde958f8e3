package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCheckInputSchema(t *testing.T) {
	d07 := `"$schema":"http://json-schema.org/draft-07/schema#",`
	for _, c := range []struct {
		schema, code, want string
	}{
		{``, "", `{"type":"object","properties":{}}`},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, "", `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{`{"properties":{"a":{"type":"string"}}}`, "", `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, "", ""},
		{`{` + d07 + `"type":"object","properties":{"n":{"type":"integer","minimum":1,"exclusiveMaximum":9}},"required":["n"]}`, "",
			`{"properties":{"n":{"exclusiveMaximum":9,"minimum":1,"type":"integer"}},"required":["n"],"type":"object"}`},
		{`{"$schema":"https://json-schema.org/draft-07/schema","type":"object"}`, "", `{"type":"object"}`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, CodeUnsupportedDialect, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{}}}`, CodeDraft07Reference, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, CodeDraft07Keyword, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`, CodeDraft07Tuple, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"type":"number","multipleOf":0.1}}}`, CodeMultipleOf, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}`, CodeUniqueItems, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"enum":[[1],2]}}}`, CodeArrayLiteral, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"const":{"x":[1]}}}}`, CodeArrayLiteral, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"type":"string","pattern":"(a)\\1"}}}`, CodeBackreference, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"type":"string","pattern":"a\\\\1"}}}`, "", ""},
		{`{` + d07 + `"type":"object","properties":{"toString":{"type":"string"}}}`, CodePrototypeName, ""},
		{`{` + d07 + `"type":"object","properties":{"a":{"$schema":"http://json-schema.org/draft-07/schema#"}}}`, CodeDraft07Reference, ""},
		{`{"type":"string"}`, CodeNotObject, ""},
		{`[1]`, CodeNotObject, ""},
		{`{"type":"object","properties":{"a":{"type":"nonsense"}}}`, CodeInvalidSchema, ""},
		{`{"type":"object","properties":` + strings.Repeat(`{"a":`, 70) + `{}` + strings.Repeat(`}`, 70) + `}`, CodeSchemaTooLarge, ""},
		{`{"type":"object","description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`, CodeSchemaTooLarge, ""},
	} {
		out, rej := CheckInputSchema(json.RawMessage(c.schema))
		switch {
		case c.code != "" && (rej == nil || rej.Code != c.code):
			t.Errorf("%.80s: want %s, got %v", c.schema, c.code, rej)
		case c.code == "" && rej != nil:
			t.Errorf("%.80s: rejected: %v", c.schema, rej)
		case c.code == "" && c.want != "" && string(out) != c.want:
			t.Errorf("%.80s: normalized to %s, want %s", c.schema, out, c.want)
		}
		if rej != nil && strings.Contains(rej.Message, "definitions/x") {
			t.Errorf("a rejection quotes the schema: %s", rej.Message)
		}
	}
}

func TestOutputSchemaValidation(t *testing.T) {
	var o OutputSchemas
	s2020 := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	s07 := json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":0}},"required":["n"]}`)
	for _, c := range []struct {
		key    string
		schema json.RawMessage
		value  string
		ok     bool
	}{
		{"a", s2020, `{"n":1}`, true},
		{"a", s2020, `{"n":"x"}`, false},
		{"a", s2020, `{}`, false},
		{"b", s07, `{"n":2}`, true},
		{"b", s07, `{"n":0}`, false},
		{"", s07, `{"n":0}`, false},
		{"c", json.RawMessage(`{"$ref":"file:///etc/passwd"}`), `{}`, false},
		{"d", json.RawMessage(`{"$ref":"https://example.com/x.json"}`), `{}`, false},
	} {
		err := o.Validate(c.key, c.schema, json.RawMessage(c.value))
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrOutputSchema)) {
			t.Errorf("%s against %s: %v", c.value, c.schema, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error: %q", err)
		}
	}
}

func TestCatalogLimits(t *testing.T) {
	item := json.RawMessage(`{"name":"t"}`)
	many := make([]json.RawMessage, MaxEntries+1)
	for i := range many {
		many[i] = item
	}
	if err := CheckList("tools", many[:MaxEntries]); err != nil {
		t.Fatal(err)
	}
	if err := CheckList("tools", many); err == nil || !strings.Contains(err.Error(), "1001 entries") {
		t.Fatalf("1001 tools: %v", err)
	}
	if err := CheckList("resources", many[:600], many[:401]); err == nil {
		t.Fatal("resources and templates do not share the entry limit")
	}
	big := json.RawMessage(fmt.Sprintf(`{"name":"t","description":"%s"}`, strings.Repeat("x", 3<<20)))
	if err := CheckList("prompts", []json.RawMessage{big}); err == nil || !strings.Contains(err.Error(), "2 MiB") {
		t.Fatalf("3 MiB: %v", err)
	}
	deep := json.RawMessage(`{"name":"t","outputSchema":` + strings.Repeat(`[`, 65) + strings.Repeat(`]`, 65) + `}`)
	if err := CheckList("tools", []json.RawMessage{item, deep}); err == nil || !strings.Contains(err.Error(), "entry 2: output schema nests 65 levels") {
		t.Fatalf("deep schema: %v", err)
	}
	wide := json.RawMessage(`{"name":"t","inputSchema":{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}}`)
	if err := CheckList("tools", []json.RawMessage{wide}); err == nil || !strings.Contains(err.Error(), "entry 1: input schema is 65554 bytes, more than the limit of 65536 (64 KiB)") {
		t.Fatalf("65 KiB schema: %v", err)
	}
	str := json.RawMessage(`{"name":"t","inputSchema":{"description":"` + strings.Repeat(`[{`, 100) + `"}}`)
	if err := CheckList("tools", []json.RawMessage{str}); err != nil {
		t.Fatalf("brackets inside a string counted as nesting: %v", err)
	}
}

// Every output-schema failure is one line of words naming where and what;
// none of it is Go syntax.
func TestOutputSchemaFailureWords(t *testing.T) {
	var o OutputSchemas
	for _, c := range []struct{ schema, value, want string }{
		{`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":"x"}`, `/n: expected integer, got string`},
		{`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":1.5}`, `/n: expected integer, got number`},
		{`{"type":"object","required":["n"]}`, `{}`, `/: missing the required property "n"`},
		{`{"type":"object"}`, `[1,2]`, `/: expected object, got array`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"enum":["x","y"]}}}}}}`,
			`{"a":[{"b":"x"},{"b":"z"}]}`, `/a/1/b: expected one of ["x","y"], got "z"`},
		{`{"type":"object","additionalProperties":false,"properties":{"a":{}}}`, `{"a":1,"b/c":{"k":[1]}}`, `/: unexpected property "b/c"`},
		{`{"type":"object","properties":{"s":{"type":"string","maxLength":2}}}`, `{"s":"abc"}`, `/s: expected at most 2 characters, got 3`},
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}}`, `{"s":"b"}`, `/s: the string does not match the pattern "^a"`},
		{`{"type":"object","properties":{"n":{"minimum":3}}}`, `{"n":2}`, `/n: 2 is less than the minimum 3`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":0}}}`, `{"n":0}`, `/n: 0 is not more than 0`},
		{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, `{"v":{"x":[1]}}`, `/v: matches none of the 2 alternatives (anyOf)`},
		{`{"type":"object","properties":{"v":{"$ref":"#/$defs/d"}},"$defs":{"d":{"type":"string"}}}`, `{"v":{"x":[1]}}`, `the value fails the schema's type rule (at schema location /$defs/d)`},
		{`{"type":"object","properties":{"e\u001b[31m":{"type":"string"}}}`, `{"e\u001b[31m":1}`, `/e: expected string, got integer`},
	} {
		err := o.Validate("", json.RawMessage(c.schema), json.RawMessage(c.value))
		if err == nil {
			t.Errorf("%s against %s: valid", c.value, c.schema)
			continue
		}
		msg := strings.TrimPrefix(err.Error(), ErrOutputSchema.Error()+": ")
		if msg != c.want {
			t.Errorf("%s against %s:\n got %q\nwant %q", c.value, c.schema, msg, c.want)
		}
		for _, bad := range []string{"&{", "map[", "%!", "<nil>", "[]interface", "\x1b"} {
			if strings.Contains(err.Error(), bad) {
				t.Errorf("%q holds Go syntax or a control character %q", err, bad)
			}
		}
	}
}

func TestOutputSchemaDialects(t *testing.T) {
	var o OutputSchemas
	for _, c := range []struct {
		schema, value string
		ok            bool
	}{
		{`{"$schema":"http://json-schema.org/draft/2020-12/schema","type":"object"}`, `{}`, true},
		{`{"$schema":"https://json-schema.org/draft-07/schema","type":"object"}`, `{}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, `{}`, false},
		{`{"type":"object","properties":{"a":{"type":"nonsense"}}}`, `{}`, false},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`, `{}`, false},
	} {
		err := o.Validate("", json.RawMessage(c.schema), json.RawMessage(c.value))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.schema, err)
		}
	}
}
