package eventstream

import (
	"reflect"
	"strings"
	"testing"
)

// eventSeeds are event params: realistic, and hostile ones.
var eventSeeds = []string{
	`{"eventId":"evt-000000001","name":"bench.event","timestamp":"2026-01-01T00:00:00.000Z","cursor":"cur-000000001","data":{"path":"/tmp/demo/dir/file-000001.txt","op":"write","size":1234},"_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-ab-7"}}`,
	`{"eventId":"e","name":"n","timestamp":"t","cursor":null,"data":null}`,
	`{"eventId":"e\n\u00e9","name":"n\"","timestamp":"t\ud800","cursor":"c\\","data":[1,"x",{"y":null}]}`,
	` {"eventId":"é","name":"日本","timestamp":"t","cursor":7,"data":1} `,
	`{"eventId":1,"name":"n","timestamp":"t","data":1}`, `{"eventId":null,"name":null,"timestamp":null}`,
	`{"eventId":"a","eventId":"b","name":"n","timestamp":"t","data":1}`, `{"EventId":"a","name":"n","timestamp":"t","data":1}`,
	`{"eventid":"a"}`, `{"NAME":"x"}`, `{"\u006eame":"x"}`, `{"nаme":"cyrillic a"}`, `{"data":1,"Data":2}`,
	`{"cursor":{"x":1}}`, `{"cursor":true}`, `{"eventId":"` + "\xff" + `"}`, `{"name":"` + "\x7f" + `"}`,
	`{"data":1}x`, `{"data":}`, `{"data":1,}`, `[]`, `null`, `{}`, `{"eventId":"` + strings.Repeat("x", 2000) + `"}`,
}

// FuzzEventFrame holds decodeEvent's fast path to json.Unmarshal: what it
// is sure of decodes to the same wireEvent (which decodeEvent then checks
// the same way, whichever path read it).
func FuzzEventFrame(f *testing.F) {
	for _, s := range eventSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		got, ok := scanEvent(params)
		want, err := unmarshalEvent(params)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("scanEvent sure of %q; json.Unmarshal: %v", params, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: scanEvent %+v, json.Unmarshal %+v", params, got, want)
		}
	})
}

func TestScanEventTakesPlainEvents(t *testing.T) {
	for _, s := range eventSeeds[:4] {
		if _, ok := scanEvent([]byte(s)); !ok {
			t.Errorf("not sure of %s", s)
		}
	}
	for _, s := range benchFrames(3) {
		if _, ok := scanEvent(s); !ok {
			t.Errorf("not sure of %s", s)
		}
	}
}
