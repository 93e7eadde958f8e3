package tools

import (
	"fmt"
	"strings"
	"testing"
)

// The description lists the servers other members offer after this
// runtime's own, marked with their member, at most maxPeerServersShown of
// them (the rest counted), never one this runtime configures; the hook
// runs and PeerGen grows only when those lines change; a peer's catalog
// adds the tool count.
func TestMCPDescriptionPeerServers(t *testing.T) {
	here := newRig(t, []string{"near"}, nil)
	there := newRig(t, []string{"far"}, nil)
	m := NewMCP(here.sys, Options{ResultDir: t.TempDir()})
	calls := 0
	m.SetPeersChanged(func() { calls++ })

	offers := []PeerOffer{{Server: "near", Member: "10.0.0.9:1"}, {Server: "far", Member: "10.0.0.2:1"}}
	for i := range maxPeerServersShown + 3 {
		offers = append(offers, PeerOffer{Server: fmt.Sprintf("s%02d", i), Member: "10.0.0.3:1"})
	}
	m.SetPeerOffers(offers)
	d := m.Tool().Description
	if !strings.Contains(d, "- far (tools not listed yet, on the member at 10.0.0.2:1)") || strings.Contains(d, "10.0.0.9:1") {
		t.Fatalf("description: %q, want far marked as the other member's and near only as this runtime's", d)
	}
	if !strings.Contains(d, fmt.Sprintf("- s%02d (", maxPeerServersShown-2)) || strings.Contains(d, fmt.Sprintf("- s%02d (", maxPeerServersShown-1)) ||
		!strings.Contains(d, "- and 4 more servers on other members") {
		t.Fatalf("description: %q, want %d peer servers listed and 4 counted", d, maxPeerServersShown)
	}
	gen := m.PeerGen()
	if calls != 1 || gen == 0 {
		t.Fatalf("after the offers: hook ran %d times, PeerGen %d; want once and grown", calls, gen)
	}
	m.SetPeerOffers(offers)
	if calls != 1 || m.PeerGen() != gen {
		t.Fatalf("the same offers again: hook ran %d times, PeerGen %d; want no change", calls, m.PeerGen())
	}

	m.SetPeers(&fakePeers{m: NewMCP(there.sys, Options{ResultDir: t.TempDir()})})
	m.SetPeerOffers([]PeerOffer{{Server: "far", Member: "10.0.0.2:1"}})
	wantOK(t, m.Execute(here.ctx, []byte(`{"tool":"far_add","args":{"a":1,"b":2}}`)), "3")
	d = m.Tool().Description
	if !strings.Contains(d, " tools, on the member at 10.0.0.2:1)") || strings.Contains(d, "far (tools not listed yet") || m.PeerGen() <= gen {
		t.Fatalf("description once far's catalog came: %q (PeerGen %d), want its tools counted", d, m.PeerGen())
	}

	m.SetPeerOffers([]PeerOffer{})
	if d := m.Tool().Description; strings.Contains(d, "far") {
		t.Fatalf("description with no member offering far: %q, want it gone", d)
	}
}
