package clock

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"sync"
)

// Rand is the runtime's only source of randomness: request ids, stream ids,
// subscription ids and jitter all come from it.
type Rand interface {
	// Uint64 returns a uniformly distributed 64-bit value.
	Uint64() uint64
}

// lockedRand makes a math/rand/v2 source safe for concurrent use.
type lockedRand struct {
	mu  sync.Mutex
	src *rand.ChaCha8 // guarded by mu
}

func (r *lockedRand) Uint64() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.src.Uint64()
}

// NewSeededRand returns a deterministic source: the same seed yields the
// same sequence. Safe for concurrent use.
func NewSeededRand(seed uint64) Rand {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:8], seed)
	binary.LittleEndian.PutUint64(key[8:16], seed^0x9e3779b97f4a7c15)
	return &lockedRand{src: rand.NewChaCha8(key)}
}

// NewCryptoRand returns a source seeded from crypto/rand, for production.
func NewCryptoRand() Rand {
	var key [32]byte
	_, _ = crand.Read(key[:]) // crypto/rand.Read never fails on supported platforms
	return &lockedRand{src: rand.NewChaCha8(key)}
}

// OrRand returns r, or a crypto-seeded source when r is nil.
func OrRand(r Rand) Rand {
	if r == nil {
		return NewCryptoRand()
	}
	return r
}

// HexID returns n random bytes from r, hex encoded (2n characters).
func HexID(r Rand, n int) string {
	b := make([]byte, 0, n+8)
	for len(b) < n {
		b = binary.LittleEndian.AppendUint64(b, r.Uint64())
	}
	return hex.EncodeToString(b[:n])
}
