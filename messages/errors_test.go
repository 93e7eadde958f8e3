package messages

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorIsOneLineAndNamesServer(t *testing.T) {
	e := Errorf(KindConnectFailed, "files", "spawn failed:\nexec: not found\r\n")
	if got := e.Error(); strings.ContainsAny(got, "\r\n") || !strings.HasPrefix(got, `server "files": `) {
		t.Fatalf("Error() = %q", got)
	}
	if e.Code() != "connect_failed" || !e.Kind.Transient() {
		t.Fatalf("code %s transient %v", e.Code(), e.Kind.Transient())
	}
	wrapped := fmt.Errorf("outer: %w", e)
	if !errors.Is(wrapped, &Error{Kind: KindConnectFailed}) || errors.Is(wrapped, &Error{Kind: KindToolError}) {
		t.Fatal("errors.Is does not match on kind")
	}
	if KindOf(wrapped) != KindConnectFailed || KindOf(errors.New("x")) != KindInternal {
		t.Fatal("KindOf")
	}
}

func TestStableCodes(t *testing.T) {
	want := "tool_not_found server_not_found server_disabled auth_required server_backoff connect_failed tool_error aborted init_failed init_timeout ambiguous_tool"
	var got []string
	for k := KindToolNotFound; k <= KindAmbiguousTool; k++ {
		got = append(got, k.Code())
	}
	if strings.Join(got, " ") != want {
		t.Fatalf("codes = %s", strings.Join(got, " "))
	}
	for k := KindNone; k <= KindInternal; k++ {
		if strings.HasPrefix(k.Code(), "kind_") {
			t.Fatalf("kind %d has no code", k)
		}
	}
}

func TestEndpointNeverPrintsValues(t *testing.T) {
	const secret = "SENTINEL-123"
	e := Endpoint{Command: "/bin/" + secret, Args: []string{secret}, Env: map[string]string{"K": secret},
		URL: "https://u:" + secret + "@h/", Headers: map[string]string{"Authorization": secret}, Cwd: secret}
	for _, s := range []string{fmt.Sprint(e), fmt.Sprintf("%v %+v %#v %s", e, e, e, e), e.LogValue().String()} {
		if strings.Contains(s, secret) {
			t.Fatalf("endpoint printed a value: %s", s)
		}
	}
	if got := (Endpoint{Env: map[string]string{"B": "2", "A": "1"}}).SortedEnv(); strings.Join(got, ",") != "A=1,B=2" {
		t.Fatalf("SortedEnv = %v", got)
	}
}
