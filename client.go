package mcprt

import (
	"context"

	"github.com/mcprt/mcprt/clientside"
)

// ClientHooks are how the host answers what servers ask of the client (the
// client side of MCP, 2025-11-25). Each hook is optional: a capability is
// advertised to servers only when its hook is set, and a server that asks
// anyway is answered with a JSON-RPC error (-32601) at once. Nothing ever
// waits for a host that has no hook.
//
// Hooks run on a goroutine of their own, may block (a person answering),
// and must return when ctx is done: the server withdrew the request
// (notifications/cancelled), its connection ended, or the runtime is
// closing. A hook that returns an error is answered to the server as a
// JSON-RPC error (-32603) naming the failure.
//
// While a server's elicitation waits for the host, the deadlines of that
// server's calls stand still: time spent waiting for a person does not
// count toward a call's deadline.
type ClientHooks struct {
	// Elicit answers a form-mode elicitation: the server asks the user for
	// values. The form has been checked against what the specification
	// allows (a schema outside it is refused before the host sees it); an
	// accepted answer is checked against the form, and the schema's
	// defaults fill the fields left out (SEP-1034), before it is sent.
	Elicit func(ctx context.Context, q ElicitForm) (ElicitAnswer, error)
	// ElicitURL asks the user's consent to open a URL (URL-mode
	// elicitation): show the server name, the URL's host and the full
	// URL. Accept means the user went (or will go) there; the server
	// reports the end with ElicitationComplete.
	ElicitURL func(ctx context.Context, q ElicitURL) (ElicitAnswer, error)
	// ElicitationComplete is told when a server reports that a URL-mode
	// elicitation finished. It must not block.
	ElicitationComplete func(server, elicitationID string)
	// Sample answers sampling/createMessage: the server asks the host's
	// model for a completion. Approval is the host's. Text messages are
	// always passed; images, audio and tools only when SamplingSupport
	// says so (other requests are refused with a clear error).
	Sample          func(ctx context.Context, q SamplingRequest) (SamplingResult, error)
	SamplingSupport SamplingSupport
	// Roots are the file roots servers may work in (roots/list), as file
	// URIs ("file:///home/me/project"). Nil advertises no roots
	// capability; Runtime.SetRoots changes them and tells the servers.
	Roots []Root
	// ListRoots, when set, answers roots/list in place of Roots, asked
	// each time with the server asking (a shared runtime asks the session
	// concerned: remote.Server). It advertises the roots capability as a
	// non-nil Roots does. An error is answered as a JSON-RPC error.
	ListRoots func(ctx context.Context, server string) ([]Root, error)
	// Progress receives the progress servers report of the `mcp` tool's
	// calls (each carries a progress token while this hook is set). It
	// must not block.
	Progress func(p Progress)
}

// Root is one root a server may work in.
type Root struct {
	// URI is a file:// URI.
	URI string `json:"uri"`
	// Name is a human-readable name (optional).
	Name string `json:"name,omitempty"`
}

// ElicitForm is a form-mode elicitation for the host to show.
type ElicitForm struct {
	// Server is the configured server asking.
	Server string
	// Message says what the server asks and why (server text: show it as
	// text, never as markup).
	Message string
	// Form is the checked form: its fields with titles, descriptions,
	// kinds, bounds, options and defaults.
	Form Form
}

// ElicitURL is a URL-mode elicitation for the host to show.
type ElicitURL struct {
	Server  string
	Message string
	// URL is the full URL; Host its host, the part a person should check.
	URL, Host string
	// ElicitationID is the server's id for it (ElicitationComplete names
	// it).
	ElicitationID string
}

// ElicitAction is what the user did with an elicitation.
type ElicitAction string

// The three answers of an elicitation.
const (
	ElicitAccept  ElicitAction = "accept"
	ElicitDecline ElicitAction = "decline"
	ElicitCancel  ElicitAction = "cancel"
)

// ElicitAnswer is the host's answer to an elicitation.
type ElicitAnswer struct {
	Action ElicitAction
	// Content holds the values of an accepted form, by field name (string,
	// float64, bool, []string); fields left out take the schema's default.
	Content map[string]any
}

// SamplingRequest is a checked sampling/createMessage request.
type SamplingRequest struct {
	Server string
	clientside.SamplingRequest
}

// SamplingResult is the host's completion.
type SamplingResult struct {
	// Text is the assistant's answer.
	Text string
	// Model names the model that answered.
	Model string
	// StopReason is "endTurn", "stopSequence", "maxTokens" or the model's
	// own (empty: endTurn).
	StopReason string
}

// Progress is one progress notification of a call or request.
type Progress struct {
	Server   string
	Token    string
	Progress float64
	// Total is 0 when the server does not know it.
	Total   float64
	Message string
	// Caller is the caller tag (WithCaller) of the call the progress is
	// of, while that call is in flight; nil otherwise.
	Caller any
}

// Form is a checked elicitation form; FormField one of its fields, with a
// FieldKind. Form.Defaults and FormField.Check check answers.
type (
	Form      = clientside.Form
	FormField = clientside.Field
	FieldKind = clientside.FieldKind
	// SamplingSupport declares what a Sample hook takes beyond text.
	SamplingSupport = clientside.SamplingSupport
)

// The kinds of form fields.
const (
	FieldString  = clientside.KindString
	FieldNumber  = clientside.KindNumber
	FieldInteger = clientside.KindInteger
	FieldBoolean = clientside.KindBoolean
	FieldEnum    = clientside.KindEnum
	FieldMulti   = clientside.KindMulti
)
