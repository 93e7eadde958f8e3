package messages

// HostMessage is something the runtime delivers into the agent host's
// conversation: an events wakeup or a status change of a subscription.
type HostMessage struct {
	// Kind is "mcp-events" or "mcp-events-status".
	Kind string
	// Text is what the model reads.
	Text string
	// Details is the structured form for the host's UI.
	Details any
	// TriggerTurn asks the host to start a model turn.
	TriggerTurn bool
	// DeliverAs says how to queue it ("followUp").
	DeliverAs string
}

// NoticeLevel grades a Notice.
type NoticeLevel int

const (
	// NoticeInfo is informational.
	NoticeInfo NoticeLevel = iota
	// NoticeWarning is something the user should know about.
	NoticeWarning
	// NoticeError is a failure the user should act on.
	NoticeError
)

// Notice is a message for the host's UI, never for the model.
type Notice struct {
	Level  NoticeLevel
	Server string
	Text   string
}
