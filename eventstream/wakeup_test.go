package eventstream

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// The reference's example (issue 14): 256 events of 60 "é" each are
// 59,688 characters in all but 75,048 bytes; counted in characters they
// all fit one batch (counted in bytes, 38 were dropped).
func TestBatchCountsCharactersNotBytes(t *testing.T) {
	b := NewEventBatcher(BatchLimits{})
	var arm []Effect
	chars, bytes := 0, 0
	for i := range 256 {
		it := &EventItem{SubscriptionID: "sub-0123456789abcdef", Server: "demo",
			Event: Event{EventID: fmt.Sprintf("e%03d", i), Name: "fs.changed", Timestamp: "2026-12-03T17:00:00Z",
				Data: json.RawMessage(`"` + strings.Repeat("é", 60) + `"`)}}
		e, err := PrepareEvent(it)
		if err != nil {
			t.Fatal(err)
		}
		chars, bytes = chars+e.Size, bytes+len(e.JSON)
		if eff := b.Add(e); i == 0 {
			arm = eff
		}
	}
	if chars > DefaultBatchChars || bytes <= DefaultBatchChars {
		t.Fatalf("the example is %d characters and %d bytes; it must fit in characters and not in bytes", chars, bytes)
	}
	if _, n := flush(t, b, arm); n != 256 {
		t.Fatalf("%d of 256 delivered", n)
	}
	if st := b.Stats(); st.Dropped != 0 {
		t.Fatalf("dropped %d", st.Dropped)
	}
}

func TestUTF16Len(t *testing.T) {
	for _, s := range []string{"", "abc", "é", "naïve café", "日本語", "😀", "a😀b", "𝄞 music", "mixed é 日 😀 \u2028"} {
		if got, want := utf16Len([]byte(s)), jsLen([]byte(s)); got != want {
			t.Errorf("utf16Len(%q) = %d, want %d", s, got, want)
		}
	}
}

// jsLen is the length of b as a JavaScript string (JSON.stringify(x).length
// in the reference): UTF-16 code units, counted here independently of the
// package's utf16Len.
func jsLen(b []byte) int { return len(utf16.Encode([]rune(string(b)))) }

// eventOfSize returns an event whose JSON encoding is exactly size
// characters (UTF-16 code units), its data a string of fill characters
// (padded with ASCII to the size).
func eventOfSize(t *testing.T, size int, fill string) Event {
	t.Helper()
	ev := Event{EventID: "e1", Name: "n", Timestamp: "t", Data: json.RawMessage(`""`)}
	base, _ := encode(ev)
	unit, _ := encode(fill)
	need, per := size-jsLen(base), jsLen(unit)-2
	ev.Data, _ = encode(strings.Repeat(fill, need/per) + strings.Repeat("x", need%per))
	if got, _ := encode(ev); jsLen(got) != size {
		t.Fatalf("event of %d characters, want %d", jsLen(got), size)
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
		{"24,000 characters stay whole", MaxEventChars, "a", false},
		{"24,001 characters are shortened", MaxEventChars + 1, "a", true},
		{"a megabyte", 1 << 20, "a", true},
		{"24,000 accented characters (more bytes) stay whole", MaxEventChars, "é", false},
		{"24,000 CJK characters (72,000 bytes) stay whole", MaxEventChars, "日本", false},
		{"24,001 CJK characters are shortened", MaxEventChars + 1, "日本", true},
		{"an emoji counts 2: 12,000 of them stay whole", MaxEventChars, "😀", false},
		{"emoji are shortened past 24,000 and never split", MaxEventChars + 1, "😀", true},
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
		if e.Size != jsLen(e.JSON) {
			t.Errorf("%s: size %d, the JSON is %d characters", tt.name, e.Size, jsLen(e.JSON))
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
		if n := jsLen([]byte(p.Preview)); n > PreviewChars || n < PreviewChars-1 || !utf8.ValidString(p.Preview) ||
			!strings.HasPrefix(string(ev.Data), p.Preview) {
			t.Errorf("%s: preview of %d characters", tt.name, n)
		}
		if jsLen(e.JSON) > DefaultBatchChars || e.Size != jsLen(e.JSON) {
			t.Errorf("%s: the shortened item is %d characters (size %d), more than a batch", tt.name, jsLen(e.JSON), e.Size)
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
		{"aé", 1, "a"},
		{"aé", 2, "aé"},
		{"日本", 1, "日"},
		{"日本語", 2, "日本"},
		{"a😀", 2, "a"}, // a surrogate pair is never split
		{"a😀", 3, "a😀"},
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

// A wakeup rebuilt from a part of a batch (a shared runtime splitting it
// among sessions) reads as the batch of that part would: same text, same
// details, a long event's preview kept as it was.
func TestWakeupOfAPart(t *testing.T) {
	long := Event{EventID: "e2", Name: "n", Timestamp: "t", Data: json.RawMessage(`"` + strings.Repeat("y", MaxEventChars) + `"`)}
	var items []*EventItem
	for _, it := range []*EventItem{
		{SubscriptionID: "a", Server: "demo", Event: Event{EventID: "e1", Name: "n", Timestamp: "t", Data: json.RawMessage(`{"k":1}`)}},
		{SubscriptionID: "b", Server: "demo", Event: long},
	} {
		e, err := PrepareEvent(it)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, e.Item) // the long one's is its shortened copy
	}
	b2 := NewEventBatcher(BatchLimits{})
	arm := b2.Add(mustPrepare(t, items[1]))
	want, ok := b2.Fire(arm[0].(Arm).Token)
	if !ok {
		t.Fatal("no wakeup")
	}
	got, err := EventsWakeup(items[1:], 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want.Text || got.Kind != want.Kind || !got.TriggerTurn || got.DeliverAs != want.DeliverAs {
		t.Fatalf("part's wakeup\n got  %+v\n want %+v", got, want)
	}
	if strings.Contains(got.Text, `"subscription_id":"a"`) || !strings.Contains(got.Text, `"truncated":true`) {
		t.Fatalf("part's wakeup text %s", got.Text)
	}
	st, err := StatusWakeup([]Snapshot{{ID: "s", Server: "demo", Name: "n", Arguments: json.RawMessage(`{}`), Status: StateActive}}, 2)
	if err != nil || st.Kind != KindStatus || !strings.HasSuffix(st.Text, `"dropped_statuses":2}`) {
		t.Fatalf("status part %+v %v", st, err)
	}
}

func mustPrepare(t *testing.T, it *EventItem) Encoded[*EventItem] {
	t.Helper()
	e, err := PrepareEvent(it)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
