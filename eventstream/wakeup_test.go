package eventstream

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// eventOfSize returns an event whose JSON encoding is exactly size bytes,
// its data a string of fill characters (padded with ASCII to the size).
func eventOfSize(t *testing.T, size int, fill string) Event {
	t.Helper()
	ev := Event{EventID: "e1", Name: "n", Timestamp: "t", Data: json.RawMessage(`""`)}
	base, _ := encode(ev)
	unit, _ := encode(fill)
	need, per := size-len(base), len(unit)-2
	ev.Data, _ = encode(strings.Repeat(fill, need/per) + strings.Repeat("x", need%per))
	if got, _ := encode(ev); len(got) != size {
		t.Fatalf("event of %d bytes, want %d", len(got), size)
	}
	return ev
}

func TestPrepareEventShortensLongEvents(t *testing.T) {
	tests := []struct {
		name  string
		size  int
		fill  string
		short bool
	}{
		{"24,000 bytes stay whole", MaxEventBytes, "a", false},
		{"24,001 bytes are shortened", MaxEventBytes + 1, "a", true},
		{"a megabyte", 1 << 20, "a", true},
		{"multi-byte characters are not split", 50_000, "日本", true},
		{"quotes double in the preview and still fit a batch", 100_000, `"`, true},
	}
	for _, tt := range tests {
		ev := eventOfSize(t, tt.size, tt.fill)
		it := &EventItem{SubscriptionID: "s1", Server: "demo", Event: ev}
		e, err := PrepareEvent(it)
		if err != nil {
			t.Fatal(err)
		}
		if !tt.short {
			if e.Item != it || !strings.Contains(string(e.JSON), string(ev.Data)) {
				t.Errorf("%s: changed", tt.name)
			}
			continue
		}
		if e.Item == it || string(it.Event.Data) != string(ev.Data) {
			t.Errorf("%s: the original item was modified or reused", tt.name)
		}
		var p Preview
		if err := json.Unmarshal(e.Item.Event.Data, &p); err != nil {
			t.Fatalf("%s: data %s: %v", tt.name, e.Item.Event.Data[:80], err)
		}
		if !p.Truncated || p.OriginalCharacters != tt.size {
			t.Errorf("%s: truncated %v original %d", tt.name, p.Truncated, p.OriginalCharacters)
		}
		if len(p.Preview) > PreviewBytes || len(p.Preview) < PreviewBytes-3 || !utf8.ValidString(p.Preview) ||
			!strings.HasPrefix(string(ev.Data), p.Preview) {
			t.Errorf("%s: preview of %d bytes", tt.name, len(p.Preview))
		}
		if len(e.JSON) > DefaultBatchBytes {
			t.Errorf("%s: the shortened item is %d bytes, more than a batch", tt.name, len(e.JSON))
		}
		var back EventItem
		if err := json.Unmarshal(e.JSON, &back); err != nil || back.Event.EventID != "e1" {
			t.Errorf("%s: item JSON does not decode: %v", tt.name, err)
		}
	}
}

func TestEventItemJSONMatchesEncoding(t *testing.T) {
	it := &EventItem{SubscriptionID: `s"1`, Server: "dé<mo>", Event: Event{EventID: "e", Name: "n", Timestamp: "t", Data: json.RawMessage(`[1, 2]`)}}
	e, err := PrepareEvent(it)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := encode(it)
	if string(e.JSON) != string(want) {
		t.Fatalf("assembled %s\n encoded %s", e.JSON, want)
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"},
		{"aé", 3, "aé"},
		{"日", 2, ""},
		{"", 0, ""},
	}
	for _, tt := range tests {
		if got := cut(tt.s, tt.n); got != tt.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// FuzzEventItemJSON checks the hand-assembled item JSON against
// encoding/json (HTML escaping off) for any strings and data.
func FuzzEventItemJSON(f *testing.F) {
	f.Add("sub", "srv", "e1", "n", "t", "c", []byte(`{"a": [1, "x"]}`), true)
	f.Add("\u2028", "\x00\x1f\"\\", "\xff\xfe", "<&>", "\b\f\n\r\t", "", []byte(`null`), false)
	f.Fuzz(func(t *testing.T, sub, server, id, name, ts, cursor string, data []byte, trunc bool) {
		if !json.Valid(data) {
			return
		}
		it := &EventItem{SubscriptionID: sub, Server: server, ReplayTruncated: trunc,
			Event: Event{EventID: id, Name: name, Timestamp: ts, Data: data}}
		if cursor != "" {
			it.Event.Cursor = CursorOf(cursor)
		}
		got, _, _, err := appendEventItem(nil, it)
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		want, err := encode(it)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if string(got) != string(want) {
			t.Fatalf("\n got  %q\n want %q", got, want)
		}
	})
}
