package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/zalando/go-keyring"
)

// Record is what a Store keeps for one server: its token and, when it came
// from dynamic registration, its client. URL binds both to the server URL
// they were issued for; a record for another URL is never used.
type Record struct {
	URL    string  `json:"url"`
	Token  *Token  `json:"token,omitempty"`
	Client *Client `json:"client,omitempty"`
}

// Store keeps Records by server name. Implementations are safe for
// concurrent use. Load returns nil, nil when there is no record.
type Store interface {
	Load(server string) (*Record, error)
	Save(server string, r *Record) error
	Delete(server string) error
	// Name describes the store in messages ("OS keyring", ...).
	Name() string
}

// ErrStoreUnavailable is wrapped by a store that cannot work on this
// system (no Secret Service, locked keyring): authorization fails closed.
var ErrStoreUnavailable = errors.New("no credential store is available")

// MemoryStore keeps records for the life of the process.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// Name implements Store.
func (s *MemoryStore) Name() string { return "process memory" }

// Load implements Store.
func (s *MemoryStore) Load(server string) (*Record, error) {
	s.mu.Lock()
	b, ok := s.m[server]
	s.mu.Unlock()
	if !ok {
		return nil, nil
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Save implements Store.
func (s *MemoryStore) Save(server string, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[server] = b
	return nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(server string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, server)
	return nil
}

// KeyringService is the service name of mcprt's keyring entries.
const KeyringService = "mcprt-oauth"

// KeyringStore keeps records in the OS credential store (macOS Keychain,
// Secret Service on Linux, Windows Credential Manager) through
// github.com/zalando/go-keyring, one entry per server name.
type KeyringStore struct {
	// Service overrides KeyringService (tests).
	Service string
}

func (k KeyringStore) service() string {
	if k.Service != "" {
		return k.Service
	}
	return KeyringService
}

// Name implements Store.
func (k KeyringStore) Name() string { return "OS keyring" }

// Load implements Store.
func (k KeyringStore) Load(server string) (*Record, error) {
	v, err := keyring.Get(k.service(), server)
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	var r Record
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return nil, fmt.Errorf("the keyring entry of %s is not a token record", server)
	}
	return &r, nil
}

// Save implements Store.
func (k KeyringStore) Save(server string, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := keyring.Set(k.service(), server, string(b)); err != nil {
		return unavailable(err)
	}
	return nil
}

// Delete implements Store.
func (k KeyringStore) Delete(server string) error {
	err := keyring.Delete(k.service(), server)
	if err == nil || errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return unavailable(err)
}

// unavailable wraps a keyring failure without its text (which may hold
// what was being stored).
func unavailable(err error) error {
	_ = err
	return fmt.Errorf("%w: the OS keyring refused the request (is a Secret Service, Keychain or Credential Manager running and unlocked?); choose another store (the CLI: --oauth-store memory or --oauth-store file)", ErrStoreUnavailable)
}
