package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// FileStore keeps records in one file encrypted with AES-256-GCM under a
// key derived from a passphrase (PBKDF2-SHA256). It is the explicit
// alternative to the OS keyring: the user chooses it, and its passphrase.
// The file is written with mode 0600, atomically.
type FileStore struct {
	// Path is the file; Passphrase derives its key.
	Path       string
	Passphrase string

	mu sync.Mutex
}

// fileMagic starts every encrypted file; a salt and a nonce follow.
const fileMagic = "mcprt-oauth-v1\n"

// Name implements Store.
func (f *FileStore) Name() string { return "encrypted file" }

// Load implements Store.
func (f *FileStore) Load(server string) (*Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if err != nil {
		return nil, err
	}
	return all[server], nil
}

// Save implements Store.
func (f *FileStore) Save(server string, r *Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if err != nil {
		return err
	}
	all[server] = r
	return f.write(all)
}

// Delete implements Store.
func (f *FileStore) Delete(server string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if err != nil {
		return err
	}
	delete(all, server)
	return f.write(all)
}

func (f *FileStore) key(salt []byte) ([]byte, error) {
	if f.Passphrase == "" {
		return nil, errors.New("the encrypted token file needs a passphrase")
	}
	return pbkdf2.Key(sha256.New, f.Passphrase, salt, 600000, 32)
}

func (f *FileStore) read() (map[string]*Record, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*Record{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the token file: %w", errors.Unwrap(err))
	}
	if len(b) < len(fileMagic)+16+12 || string(b[:len(fileMagic)]) != fileMagic {
		return nil, errors.New("the token file is not an mcprt encrypted token file")
	}
	rest := b[len(fileMagic):]
	salt, nonce, sealed := rest[:16], rest[16:28], rest[28:]
	gcm, err := f.aead(salt)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, sealed, []byte(fileMagic))
	if err != nil {
		return nil, errors.New("the token file cannot be decrypted (wrong passphrase or damaged file)")
	}
	all := map[string]*Record{}
	if err := json.Unmarshal(plain, &all); err != nil {
		return nil, errors.New("the token file's content is damaged")
	}
	return all, nil
}

func (f *FileStore) aead(salt []byte) (cipher.AEAD, error) {
	k, err := f.key(salt)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (f *FileStore) write(all map[string]*Record) error {
	plain, err := json.Marshal(all)
	if err != nil {
		return err
	}
	salt, nonce := make([]byte, 16), make([]byte, 12)
	_, _ = rand.Read(salt)
	_, _ = rand.Read(nonce)
	gcm, err := f.aead(salt)
	if err != nil {
		return err
	}
	out := append([]byte(fileMagic), salt...)
	out = append(out, nonce...)
	out = gcm.Seal(out, nonce, plain, []byte(fileMagic))
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return fmt.Errorf("cannot create the token file's folder: %w", errors.Unwrap(err))
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".mcprt-oauth-*")
	if err != nil {
		return fmt.Errorf("cannot write the token file: %w", errors.Unwrap(err))
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("cannot write the token file: %w", errors.Unwrap(err))
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}
