package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Both writers write what encoding/json writes: AppendMarshalString as
// json.Marshal, AppendString as an Encoder without HTML escaping.
func TestAppendStringIsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f", "<a&b>",
		"é ü 日本", "\u2028\u2029", "bad \xff\xfe utf8", "\b\f", "mixed <\"é\"> \x02"} {
		want, _ := json.Marshal(s)
		if got := AppendMarshalString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendMarshalString(%q) = %s, want x%s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got, want := AppendString(nil, s), bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}
