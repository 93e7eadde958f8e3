package eventstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseCatalogPage(t *testing.T) {
	tests := []struct {
		name, result string
		events       int
		next         string
		err          string
	}{
		{"figma-like page", `{"events":[{"name":"figma.comment.created","description":"d","delivery":["push","poll"],"inputSchema":{"type":"object"},"payloadSchema":{},"_meta":{}}],"nextCursor":"p2"}`, 1, "p2", ""},
		{"empty catalog", `{"events":[]}`, 0, "", ""},
		{"null nextCursor ends", `{"events":[],"nextCursor":null}`, 0, "", ""},
		{"minimal descriptor", `{"events":[{"name":"a","delivery":[]}]}`, 1, "", ""},
		{"not an object", `[]`, 0, "", "not an object"},
		{"events missing", `{}`, 0, "", "events is missing"},
		{"events not an array", `{"events":{}}`, 0, "", "invalid event catalog"},
		{"descriptor not an object", `{"events":[1]}`, 0, "", "events[0]: not an object"},
		{"name missing", `{"events":[{"delivery":["push"]}]}`, 0, "", "name is missing"},
		{"name not a string", `{"events":[{"name":1,"delivery":["push"]}]}`, 0, "", "wrong field type"},
		{"delivery missing", `{"events":[{"name":"a"}]}`, 0, "", "delivery is missing"},
		{"delivery not strings", `{"events":[{"name":"a","delivery":[1]}]}`, 0, "", "wrong field type"},
		{"description not a string", `{"events":[{"name":"a","delivery":[],"description":2}]}`, 0, "", "wrong field type"},
		{"inputSchema not an object", `{"events":[{"name":"a","delivery":[],"inputSchema":"x"}]}`, 0, "", "inputSchema is not an object"},
		{"nextCursor not a string", `{"events":[],"nextCursor":3}`, 0, "", "nextCursor is not a string"},
	}
	for _, tt := range tests {
		page, err := ParseCatalogPage(json.RawMessage(tt.result))
		if tt.err != "" {
			if err == nil || !errors.Is(err, ErrCatalog) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || len(page.Events) != tt.events || page.NextCursor != tt.next {
			t.Errorf("%s: %+v %v", tt.name, page, err)
		}
	}
}

func TestDescriptorRendersAsSent(t *testing.T) {
	raw := `{"name":"a","delivery":["push"],"payloadSchema":{"type":"object"},"x":1}`
	page, err := ParseCatalogPage(json.RawMessage(`{"events":[` + raw + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(map[string]any{"events": page.Events})
	if string(got) != `{"events":[`+raw+`]}` {
		t.Fatalf("rendered %s", got)
	}
}

func TestPager(t *testing.T) {
	page := func(name, next string) json.RawMessage {
		if next == "" {
			return json.RawMessage(fmt.Sprintf(`{"events":[{"name":%q,"delivery":["push"]}]}`, name))
		}
		return json.RawMessage(fmt.Sprintf(`{"events":[{"name":%q,"delivery":["push"]}],"nextCursor":%q}`, name, next))
	}
	t.Run("follows cursors to the end", func(t *testing.T) {
		var p Pager
		for i, pg := range []json.RawMessage{page("a", "c1"), page("b", "c2"), page("c", "")} {
			next, done, err := p.Page(pg)
			if err != nil || done != (i == 2) || (!done && next != fmt.Sprint("c", i+1)) {
				t.Fatalf("page %d: %q %v %v", i, next, done, err)
			}
		}
		if len(p.Events()) != 3 {
			t.Fatalf("events %d", len(p.Events()))
		}
	})
	t.Run("a repeated cursor is rejected", func(t *testing.T) {
		var p Pager
		p.Page(page("a", "c1"))
		if _, _, err := p.Page(page("b", "c1")); !errors.Is(err, ErrPagination) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("at most 100 pages", func(t *testing.T) {
		var p Pager
		for i := 1; i < MaxCatalogPages; i++ {
			if _, done, err := p.Page(page("a", fmt.Sprint("c", i))); err != nil || done {
				t.Fatalf("page %d: %v", i, err)
			}
		}
		if _, done, err := p.Page(page("a", "")); err != nil || !done {
			t.Fatalf("the 100th page, last: %v", err)
		}
		var q Pager
		for i := 1; i < MaxCatalogPages; i++ {
			q.Page(page("a", fmt.Sprint("c", i)))
		}
		if _, _, err := q.Page(page("a", "more")); !errors.Is(err, ErrPagination) {
			t.Fatalf("the 100th page asks for a 101st: %v", err)
		}
	})
	t.Run("an invalid page fails", func(t *testing.T) {
		var p Pager
		if _, _, err := p.Page(json.RawMessage(`{}`)); !errors.Is(err, ErrCatalog) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestFindPush(t *testing.T) {
	page, err := ParseCatalogPage(json.RawMessage(`{"events":[
		{"name":"fs.changed","delivery":["push"]},
		{"name":"hooks","delivery":["poll","webhook"]},
		{"name":"none","delivery":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := FindPush(page.Events, "fs.changed"); err != nil || d.Name != "fs.changed" {
		t.Fatalf("fs.changed: %v", err)
	}
	if _, err := FindPush(page.Events, "missing"); !errors.Is(err, ErrUnknownEvent) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing: %v", err)
	}
	if _, err := FindPush(page.Events, "hooks"); !errors.Is(err, ErrNoPush) || !strings.Contains(err.Error(), "hooks offers poll, webhook") {
		t.Fatalf("hooks: %v", err)
	}
	if _, err := FindPush(page.Events, "none"); !errors.Is(err, ErrNoPush) || !strings.Contains(err.Error(), "offers none") {
		t.Fatalf("none: %v", err)
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":{"y":2,"x":[3,{"q":1,"p":2}]}}`, `{ "b": {"x":[3,{"p":2,"q":1}],"y":2}, "a":1 }`, true},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567890}`, true},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567891}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`{"s":"<&>"}`, `{"s":"<&>"}`, true},
	}
	for _, tt := range tests {
		a, err1 := Canonical(json.RawMessage(tt.a))
		b, err2 := Canonical(json.RawMessage(tt.b))
		if err1 != nil || err2 != nil || (a == b) != tt.same {
			t.Errorf("%s vs %s: %q %q %v %v", tt.a, tt.b, a, b, err1, err2)
		}
	}
	if c, err := Canonical(nil); c != "{}" || err != nil {
		t.Errorf("nil: %q %v", c, err)
	}
	for _, bad := range []string{`[1]`, `{"a":`, `{} {}`, `"x"`} {
		if _, err := Canonical(json.RawMessage(bad)); !errors.Is(err, ErrSpec) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
