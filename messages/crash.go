package messages

// ActorKind names a kind of actor the runtime spawns. It appears in crash
// notices and is what the crash-injection seam is asked about.
type ActorKind string

// The actor kinds. Every actor of the runtime has one and a parent under
// the root supervisor (docs/architecture.md, "Supervision").
const (
	ActorServer       ActorKind = "server"
	ActorSession      ActorKind = "session"
	ActorStream       ActorKind = "stream"
	ActorObserver     ActorKind = "observer"
	ActorEvents       ActorKind = "events"
	ActorSubscription ActorKind = "subscription"
	ActorBatcher      ActorKind = "batcher"

	// The shared runtime's actors (remote/): a serving member's gateway,
	// which spawns a session actor per attach, each attached session's
	// actor on the member, and the receiver of an attaching process, which
	// takes the member's replies, deliveries and notices.
	ActorGateway         ActorKind = "gateway"
	ActorAttachedSession ActorKind = "attached-session"
	ActorReceiver        ActorKind = "receiver"
)

// CrashInjector is the crash-injection seam, for simulation and tests
// only; production never sets it. The runtime asks it before every
// ordinary message an actor of kind takes (its lifecycle messages are
// not asked about); true makes that message panic, as a bug would.
type CrashInjector func(kind ActorKind) bool

// InjectedCrash is the panic value of an injected crash.
const InjectedCrash = "injected crash"
