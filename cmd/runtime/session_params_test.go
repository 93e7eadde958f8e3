package main

import (
	"encoding/json"
	"testing"
)

// Issue 20 (docs/sidecar.md): malformed params name the field and the JSON
// type expected, never a Go type.
func TestDecodeParamsNamesFieldAndJSONType(t *testing.T) {
	for params, want := range map[string]string{
		`[1]`:                   "params: expected an object",
		`"x"`:                   "params: expected an object",
		`{"arguments":"x"}`:     "params.arguments: expected object",
		`{"server":5}`:          "params.server: expected string",
		`{"fresh":"yes"}`:       "params.fresh: expected boolean",
		`{"server":"s","n":[]}`: "params.n: expected number",
	} {
		var p struct {
			Server    string         `json:"server"`
			Fresh     bool           `json:"fresh"`
			Arguments map[string]any `json:"arguments"`
			N         int            `json:"n"`
		}
		err := decodeParams(json.RawMessage(params), &p)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", params, err, want)
		}
	}
}
