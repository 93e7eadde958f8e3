package supervisor

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

func refreshCmd(token messages.Token) *messages.Request {
	// Any Failable serves as a refresh's caller.
	return &messages.Request{Token: token, Reply: func(messages.Reply) {}}
}

func page(items int, next string) json.RawMessage {
	out := `{"tools":[` + strings.TrimSuffix(strings.Repeat(`{},`, items), ",") + `]`
	if next != "" {
		out += `,"nextCursor":"` + next + `"`
	}
	return json.RawMessage(out + "}")
}

// listed returns the fake listing of the last CatalogListed in effects.
func listed(t *testing.T, effects []Effect) *fakeListing {
	t.Helper()
	for _, e := range effects {
		if c, ok := e.(CatalogListed); ok {
			return c.Listing.(*fakeListing)
		}
	}
	t.Fatalf("no catalog-listed in %s", render(effects))
	return nil
}

func TestRefreshJoinsTheListingInProgress(t *testing.T) {
	s := core(Lazy)
	expect(t, "first refresh dials", s.Refresh(t0, 1, messages.OriginModel, false, false, refreshCmd(1)), "dial gen=1")
	expect(t, "dialed: one listing for both", connected(t, s, t0, 1),
		"disarm startup; release-slot gen=1; arm idle 1m0s #1; disarm idle; arm deadline 30s #1; send gen=1 1 tools/list; publish-info gen=1")
	expect(t, "second refresh joins", s.Refresh(t0, 2, messages.OriginModel, false, true, refreshCmd(2)), "")
	eff := s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, Result: page(2, "")})
	expect(t, "done", eff, "tools-listed 2; catalog-listed gen=1; answer ok; answer ok; arm idle 1m0s #3")
	if got := strings.Join(listed(t, eff).log, "; "); got != "add tools/list 2" {
		t.Fatalf("listing: %s", got)
	}
	expect(t, "current catalog answers at once", s.Refresh(t0, 3, messages.OriginModel, false, false, refreshCmd(3)), "answer ok")
}

func TestRefreshStepsAndPages(t *testing.T) {
	s := core(Lazy)
	s.Refresh(t0, 1, messages.OriginModel, false, false, refreshCmd(1))
	s.SlotGranted(t0, 1)
	s.Dialed(t0, 1, nil, true, Caps{Resources: true, Prompts: true})
	expect(t, "second page", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, Result: page(1, "c1")}), "send gen=1 2 tools/list")
	expect(t, "resources", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 2, Result: page(1, "")}), "tools-listed 2; send gen=1 3 resources/list")
	expect(t, "templates", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 3, Result: json.RawMessage(`{"resources":[]}`)}), "send gen=1 4 resources/templates/list")
	expect(t, "prompts", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 4, Result: json.RawMessage(`{}`)}), "send gen=1 5 prompts/list")
	eff := s.OpResult(t0, messages.OpResult{Gen: 1, ID: 5, Err: messages.Errorf(messages.KindRPC, "s", "method not found")})
	expect(t, "an optional part fails", eff, "catalog-listed gen=1; answer ok; arm idle 1m0s #3")
	want := "add tools/list 2; add resources/list 0; add resources/templates/list 0; skip prompts/list: method not found"
	if got := strings.Join(listed(t, eff).log, "; "); got != want {
		t.Fatalf("listing:\n got  %s\n want %s", got, want)
	}
}

func TestRefreshCursorLoopFailsTheListing(t *testing.T) {
	s := core(Lazy)
	s.Refresh(t0, 1, messages.OriginModel, false, false, refreshCmd(1))
	connected(t, s, t0, 1)
	s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, Result: page(1, "c1")})
	expect(t, "repeated cursor", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 2, Result: page(1, "c1")}),
		"list-error protocol_error; answer protocol_error; arm idle 1m0s #3")
	if s.CatalogError() == nil {
		t.Fatal("the failed listing does not show while its connection lasts")
	}
	s.ConnClosed(t0, 1, nil)
	if s.CatalogError() != nil {
		t.Fatal("the failed listing still shows after its connection ended")
	}
}

func TestRefreshLimitWithdrawsTools(t *testing.T) {
	s := NewServer(ServerConfig{Name: "s", CatalogTimeout: time.Second, StartupTimeout: 10 * time.Second, MaxPages: 3,
		NewListing: func() Listing { return &fakeListing{failTools: errString("too many tools"), limit: true} }}, 0, 0, nil, Handover{})
	s.Refresh(t0, 1, messages.OriginModel, false, false, refreshCmd(1))
	connected(t, s, t0, 1)
	expect(t, "limit", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, Result: page(1, "")}),
		"tools-listed 1; withdraw protocol_error reset=true; answer protocol_error")
}

func TestRefreshSupersededByANewConnection(t *testing.T) {
	s := core(Lazy)
	s.Refresh(t0, 1, messages.OriginModel, false, false, refreshCmd(1))
	connected(t, s, t0, 1)
	// An explicit fresh refresh replaces the connection; its listing takes
	// over the first one's caller.
	expect(t, "fresh refresh", s.Refresh(t0, 2, messages.OriginExplicit, true, false, refreshCmd(2)), "revive; disarm idle; disarm health; dial gen=2")
	expect(t, "new connection", connected(t, s, t0, 2),
		"disarm startup; release-slot gen=2; arm idle 1m0s #3; disarm idle; send gen=2 2 tools/list; publish-info gen=2")
	expect(t, "the superseded listing's answer is ignored", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, Result: page(1, "")}),
		"tools-listed 1; close gen=1")
	expect(t, "both callers hear the new listing", s.OpResult(t0, messages.OpResult{Gen: 2, ID: 2, Result: page(1, "")}),
		"tools-listed 1; catalog-listed gen=2; answer ok; answer ok; arm idle 1m0s #5")
}

func TestRefreshMovesWhenItsConnectionEnds(t *testing.T) {
	s := core(Lazy)
	s.Refresh(t0, 1, messages.OriginModel, false, false, refreshCmd(1))
	connected(t, s, t0, 1)
	lost := messages.Errorf(messages.KindDisconnected, "s", "gone")
	expect(t, "connection ends under the listing", s.ConnClosed(t0, 1, lost), "relist; arm idle 1m0s #3; disarm idle; disarm health")
	expect(t, "relist dials", s.Relist(t0), "dial gen=2")
	expect(t, "listed again for the same caller", connected(t, s, t0, 2),
		"disarm startup; release-slot gen=2; arm idle 1m0s #5; disarm idle; send gen=2 2 tools/list; publish-info gen=2")
	expect(t, "done", s.OpResult(t0, messages.OpResult{Gen: 2, ID: 2, Result: page(0, "")}),
		"tools-listed 0; catalog-listed gen=2; answer ok; arm idle 1m0s #7")
}

func TestRefreshAbortAndChange(t *testing.T) {
	s := core(Lazy)
	s.Refresh(t0, 1, messages.OriginModel, false, false, refreshCmd(1))
	connected(t, s, t0, 1)
	expect(t, "abort the caller; the listing goes on", s.Abort(t0, 1), "answer aborted")
	expect(t, "a list changes meanwhile", s.CatalogChanged(t0, 1), "catalog-stale")
	expect(t, "done, and listed again", s.OpResult(t0, messages.OpResult{Gen: 1, ID: 1, Result: page(0, "")}),
		"tools-listed 0; catalog-listed gen=1; send gen=1 2 tools/list")
	expect(t, "a change on another generation is ignored", s.CatalogChanged(t0, 7), "")
}

type errString string

func (e errString) Error() string { return string(e) }
