package catalog

import (
	"encoding/json"
	"testing"
)

// A listing's _meta is kept on tools, resources, templates and prompts
// when it is an object, and dropped when it is anything else.
func TestMetaKept(t *testing.T) {
	tools, _, err := AdmitTools([]json.RawMessage{
		json.RawMessage(`{"name":"a","inputSchema":{"type":"object"},"_meta":{"ui": {"resourceUri":"ui://a"}}}`),
		json.RawMessage(`{"name":"b","inputSchema":{"type":"object"},"_meta":"not an object"}`),
	})
	if err != nil || len(tools) != 2 {
		t.Fatal(tools, err)
	}
	if string(tools[0].Meta) != `{"ui":{"resourceUri":"ui://a"}}` || tools[1].Meta != nil {
		t.Errorf("tools' meta: %s, %s", tools[0].Meta, tools[1].Meta)
	}
	rs, ts, _, err := AdmitResources(
		[]json.RawMessage{json.RawMessage(`{"uri":"mem://a","name":"a","_meta":{"k":1}}`)},
		[]json.RawMessage{json.RawMessage(`{"uriTemplate":"mem://{x}","name":"t","_meta":{"k":2}}`)})
	if err != nil || string(rs[0].Meta) != `{"k":1}` || string(ts[0].Meta) != `{"k":2}` {
		t.Errorf("resources' meta: %+v %+v %v", rs, ts, err)
	}
	ps, err := AdmitPrompts([]json.RawMessage{json.RawMessage(`{"name":"p","_meta":{"k":3}}`), json.RawMessage(`{"name":"q","_meta":null}`)})
	if err != nil || string(ps[0].Meta) != `{"k":3}` || ps[1].Meta != nil {
		t.Errorf("prompts' meta: %+v %v", ps, err)
	}
}
