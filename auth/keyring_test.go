package auth

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// keyringChild marks the test binary re-executed inside a private D-Bus
// session with an unlocked gnome-keyring.
const keyringChild = "MCPRT_AUTH_KEYRING_CHILD"

// The OS keyring store against a real Secret Service: gnome-keyring in its
// own D-Bus session (dbus-run-session), unlocked with a throwaway password.
// Skipped where gnome-keyring is not installed (apt-get install
// gnome-keyring).
func TestKeyringStoreSecretService(t *testing.T) {
	if os.Getenv(keyringChild) == "1" {
		keyringRoundTrip(t)
		return
	}
	for _, bin := range []string{"dbus-run-session", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed; .ci/run installs gnome-keyring and dbus-daemon", bin)
			}
			t.Skipf("%s is not installed", bin)
		}
	}
	script := `printf 'throwaway' | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$0" -test.run '^TestKeyringStoreSecretService$' -test.count=1 -test.v`
	cmd := exec.CommandContext(t.Context(), "dbus-run-session", "--", "sh", "-c", script, os.Args[0])
	cmd.Env = append(os.Environ(), keyringChild+"=1", "HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "XDG_RUNTIME_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestKeyringStoreSecretService") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "SENTINEL") {
		t.Fatalf("a secret reached the output:\n%s", out)
	}
}

func keyringRoundTrip(t *testing.T) {
	k := KeyringStore{Service: "mcprt-oauth-test"}
	if r, err := k.Load("srv"); err != nil || r != nil {
		t.Fatalf("empty keyring: %v %v", r, err)
	}
	rec := &Record{URL: "https://h/mcp", Token: &Token{AccessToken: "tok-SENTINEL", RefreshToken: "refresh-SENTINEL", Scope: "a"}}
	if err := k.Save("srv", rec); err != nil {
		t.Fatal(err)
	}
	got, err := k.Load("srv")
	if err != nil || got == nil || got.Token.AccessToken != "tok-SENTINEL" || got.URL != "https://h/mcp" {
		t.Fatalf("load: %v %v", got, err)
	}
	// An Authorizer for another URL does not use the stored token.
	a := &Authorizer{Server: "srv", URL: "https://other/mcp", Store: k}
	if st, err := a.Status(); err != nil || st.Authorized || st.Store != "OS keyring" {
		t.Fatalf("status for another URL: %+v %v", st, err)
	}
	if err := k.Delete("srv"); err != nil {
		t.Fatal(err)
	}
	if r, err := k.Load("srv"); err != nil || r != nil {
		t.Fatalf("after delete: %v %v", r, err)
	}
}

// Without any Secret Service the keyring store fails closed with a clear
// message, and nothing is stored elsewhere.
func TestKeyringStoreFailsClosed(t *testing.T) {
	if os.Getenv(keyringChild) == "1" {
		t.Skip("inside the keyring session")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	k := KeyringStore{Service: "mcprt-oauth-test"}
	err := k.Save("srv", &Record{URL: "https://h/mcp", Token: &Token{AccessToken: "tok-SENTINEL"}})
	if err == nil || !strings.Contains(err.Error(), "--oauth-store memory or --oauth-store file") || strings.Contains(err.Error(), "SENTINEL") {
		t.Fatalf("err %v", err)
	}
}
