package jsonscan

import (
	"encoding/json"
	"testing"
)

// BenchmarkObject takes an event notification's envelope apart, as the
// line reader does; BenchmarkUnmarshal is what it replaces.
func BenchmarkObject(b *testing.B) {
	line := []byte(seeds[0])
	vals := make([][]byte, len(envelopeKeys))
	b.SetBytes(int64(len(line)))
	for range b.N {
		if !Object(line, envelopeKeys, vals) {
			b.Fatal("not sure")
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	line := []byte(seeds[0])
	b.SetBytes(int64(len(line)))
	for range b.N {
		var e envelope
		if err := json.Unmarshal(line, &e); err != nil {
			b.Fatal(err)
		}
	}
}
