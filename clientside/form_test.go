package clientside

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The conformance suite's elicitation-sep1034-client-defaults schema.
const sep1034 = `{"type":"object","properties":{
  "name":{"type":"string","default":"John Doe"},
  "age":{"type":"integer","default":30},
  "score":{"type":"number","default":95.5},
  "status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
  "verified":{"type":"boolean","default":true}},"required":[]}`

func TestDefaultsFillTheForm(t *testing.T) {
	form, err := ParseForm(json.RawMessage(sep1034))
	if err != nil {
		t.Fatal(err)
	}
	got, err := form.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "John Doe", "age": 30.0, "score": 95.5, "status": "active", "verified": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %v, want %v", got, want)
	}
	// A given field wins over its default; the rest are filled.
	got, err = form.Complete(map[string]any{"name": "Ada", "status": "pending"})
	if err != nil {
		t.Fatal(err)
	}
	if got["name"] != "Ada" || got["status"] != "pending" || got["age"] != 30.0 {
		t.Errorf("completed %v", got)
	}
}

func TestSchemasOutsideTheSpecAreRefused(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`[]`, "not a JSON object"},
		{`{"type":"array"}`, `"type" must be "object"`},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{}}}}`, `property "a": nested objects`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`, `property "a": an array may only be`},
		{`{"type":"object","properties":{"a":{"type":"string","$ref":"#/x"}}}`, `keyword "$ref"`},
		{`{"type":"object","properties":{"a":{"type":"string","format":"ipv4"}}}`, `format "ipv4"`},
		{`{"type":"object","properties":{"a":{"type":"null"}}}`, `type "null" is not allowed`},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, `property "b": is required but not a property`},
		{`{"type":"object","properties":{"a":{"type":"integer","default":1.5}}}`, `its default expected an integer`},
		{`{"type":"object","properties":{"a":{"type":"string","enum":["x"],"enumNames":["X","Y"]}}}`, "enumNames has 2 names for 1 values"},
		{`{"type":"object","properties":{"a":{"title":"no type"}}}`, `has no "type"`},
		{`{"type":"object","allOf":[]}`, `keyword "allOf"`},
	} {
		_, err := ParseForm(json.RawMessage(tc.schema))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.schema, err, tc.want)
		}
	}
}

func TestEnumsAndMultiSelect(t *testing.T) {
	form, err := ParseForm(json.RawMessage(`{"type":"object","properties":{
	  "titled":{"type":"string","oneOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]},
	  "legacy":{"type":"string","enum":["x","y"],"enumNames":["Ex","Why"]},
	  "multi":{"type":"array","items":{"anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},"minItems":1,"maxItems":2,"default":["r"]},
	  "plain":{"type":"array","items":{"type":"string","enum":["p","q"]}}},"required":["titled"]}`))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Field{}
	for _, f := range form.Fields {
		byName[f.Name] = f
	}
	if o := byName["titled"].Options; len(o) != 2 || o[0].Title != "Alpha" {
		t.Errorf("titled options %v", o)
	}
	if o := byName["legacy"].Options; o[1].Title != "Why" {
		t.Errorf("legacy options %v", o)
	}
	if byName["multi"].Kind != KindMulti || !reflect.DeepEqual(byName["multi"].Default, []string{"r"}) {
		t.Errorf("multi %+v", byName["multi"])
	}
	for _, tc := range []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{}, `field "titled" is required`},
		{map[string]any{"titled": "c"}, `field "titled" expected one of "a", "b", got "c"`},
		{map[string]any{"titled": "a", "multi": []any{}}, `field "multi" has 0 choices, at least 1 are needed`},
		{map[string]any{"titled": "a", "multi": []any{"r", "r"}}, `chooses "r" twice`},
		{map[string]any{"titled": "a", "plain": "p"}, `field "plain" expected a list of choices, got a string`},
		{map[string]any{"titled": "a", "extra": 1.0}, `field "extra" is not a field of the form`},
	} {
		_, err := form.Complete(tc.content)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.content, err, tc.want)
		}
	}
	got, err := form.Complete(map[string]any{"titled": "b", "plain": []any{"q", "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["plain"], []string{"q", "p"}) || !reflect.DeepEqual(got["multi"], []string{"r"}) {
		t.Errorf("completed %v", got)
	}
}

func TestPrimitiveChecks(t *testing.T) {
	form, err := ParseForm(json.RawMessage(`{"type":"object","properties":{
	  "email":{"type":"string","format":"email"},
	  "site":{"type":"string","format":"uri"},
	  "day":{"type":"string","format":"date"},
	  "at":{"type":"string","format":"date-time"},
	  "short":{"type":"string","minLength":2,"maxLength":3},
	  "n":{"type":"integer","minimum":1,"maximum":10},
	  "ok":{"type":"boolean"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]any{"email": "a@b.example", "site": "https://x.example/p", "day": "2026-12-03", "at": "2026-12-03T10:00:00Z", "short": "héé", "n": 10.0, "ok": false}
	if _, err := form.Complete(good); err != nil {
		t.Errorf("a good answer: %v", err)
	}
	for field, bad := range map[string]any{
		"email": "Ada <a@b.example>", "site": "/relative", "day": "03/12/2026", "at": "2026-12-03", "short": "héllo", "n": 2.5, "ok": "yes",
	} {
		answer := map[string]any{field: bad}
		if _, err := form.Complete(answer); err == nil || !strings.Contains(err.Error(), `field "`+field+`"`) {
			t.Errorf("%s=%v: error %v", field, bad, err)
		}
	}
	if _, err := form.Complete(map[string]any{"n": 11.0}); err == nil || !strings.Contains(err.Error(), "at most 10") {
		t.Errorf("n=11: %v", err)
	}
}

func TestElicitURL(t *testing.T) {
	u, err := ParseElicitURL("https://auth.example.com:8443/step?x=1")
	if err != nil || u.Host != "auth.example.com:8443" {
		t.Errorf("a good URL: %+v %v", u, err)
	}
	for raw, want := range map[string]string{
		"javascript:alert(1)":            "not http or https",
		"file:///etc/passwd":             "not http or https",
		"https://user:pw@host.example/x": "user name or password",
		"https://host.example/\x1b[2J":   "control characters",
		"https:///nohost":                "no host",
	} {
		if _, err := ParseElicitURL(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", raw, err, want)
		}
	}
}
