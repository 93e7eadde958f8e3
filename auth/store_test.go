package auth

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileStoreEncrypts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "tokens")
	fs := &FileStore{Path: path, Passphrase: "pass phrase"}
	rec := &Record{URL: "https://h/mcp", Token: &Token{AccessToken: "tok-SENTINEL", RefreshToken: "refresh-SENTINEL"}}
	if err := fs.Save("srv", rec); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil || bytes.Contains(raw, []byte("SENTINEL")) || bytes.Contains(raw, []byte("h/mcp")) {
		t.Fatalf("file holds plaintext (%v)", err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	got, err := (&FileStore{Path: path, Passphrase: "pass phrase"}).Load("srv")
	if err != nil || got == nil || got.Token.AccessToken != "tok-SENTINEL" {
		t.Fatalf("load: %v %v", got, err)
	}
	_, err = (&FileStore{Path: path, Passphrase: "wrong"}).Load("srv")
	if err == nil || strings.Contains(err.Error(), "SENTINEL") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if err := fs.Delete("srv"); err != nil {
		t.Fatal(err)
	}
	if got, err := fs.Load("srv"); err != nil || got != nil {
		t.Fatalf("after delete: %v %v", got, err)
	}
}

// The printing methods of everything holding a secret redact it.
func TestSecretsDoNotPrint(t *testing.T) {
	for _, v := range []any{
		Settings{ClientSecret: "SENTINEL", IDPIDToken: "SENTINEL"}, Token{AccessToken: "SENTINEL", RefreshToken: "SENTINEL"},
		Client{ID: "x", Secret: "SENTINEL"},
	} {
		for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
			if s := sprintf(f, v); strings.Contains(s, "SENTINEL") {
				t.Errorf("%s of %T prints a secret: %s", f, v, s)
			}
		}
	}
}

func sprintf(f string, v any) string { return fmt.Sprintf(f, v) }
