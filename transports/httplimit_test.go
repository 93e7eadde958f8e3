package transports

import (
	"mime"
	"testing"
)

// mediaType's fast path agrees with mime.ParseMediaType on every value.
func TestMediaType(t *testing.T) {
	for _, ct := range []string{
		"application/json", "text/event-stream", "application/json; charset=utf-8",
		"Text/Event-Stream", " application/json", "application/json;", "text/html",
		"", "not a media type", "application/json; charset=", "text/event-stream;charset=UTF-8",
	} {
		want, _, _ := mime.ParseMediaType(ct)
		if got := mediaType(ct); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", ct, got, want)
		}
	}
}
