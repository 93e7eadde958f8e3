package clientside

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestSampling(t *testing.T) {
	req, err := ParseSampling(json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}},
	  {"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
	  "systemPrompt":"be brief","maxTokens":100,"modelPreferences":{"hints":[{"name":"claude"}]}}`), SamplingSupport{})
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 2 || req.Messages[0].Text != "hi" || req.Messages[1].Text != "a\nb" || req.MaxTokens != 100 || req.SystemPrompt != "be brief" {
		t.Errorf("parsed %+v", req)
	}
	image := `{"messages":[{"role":"user","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}],"maxTokens":5}`
	var unsup *UnsupportedError
	if _, err := ParseSampling(json.RawMessage(image), SamplingSupport{}); !errors.As(err, &unsup) || !strings.Contains(err.Error(), "image content") {
		t.Errorf("image without support: %v", err)
	}
	if _, err := ParseSampling(json.RawMessage(image), SamplingSupport{Images: true}); err != nil {
		t.Errorf("image with support: %v", err)
	}
	tools := `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":5,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
	if _, err := ParseSampling(json.RawMessage(tools), SamplingSupport{}); !errors.As(err, &unsup) {
		t.Errorf("tools without support: %v", err)
	}
	var perr *ParamsError
	for params, field := range map[string]string{
		`{"messages":[],"maxTokens":5}`:                                                                      "messages",
		`{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`:                                "maxTokens",
		`{"messages":[{"role":"system","content":{"type":"text","text":"x"}}],"maxTokens":1}`:                "messages[0].role",
		`{"messages":[{"role":"user","content":"x"}],"maxTokens":1}`:                                         "messages[0].content",
		`{"messages":[{"role":"user","content":{"type":"video","text":"x"}}],"maxTokens":1}`:                 "messages[0].content[0].type",
		`{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":"5"}`:                "maxTokens",
		`{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"systemPrompt":1,"maxTokens":5}`: "systemPrompt",
	} {
		if _, err := ParseSampling(json.RawMessage(params), SamplingSupport{}); !errors.As(err, &perr) || perr.Field != field {
			t.Errorf("%s: error %v, want field %s", params, err, field)
		}
	}
}
