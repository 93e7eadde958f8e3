// Package eventstream owns the MCP events protocol as pure state machines
// (events-protocol.md; docs/events.md has the design).
//
// # Parts
//
//   - catalog validation: ParseCatalogPage, Pager (pagination, at most
//     MaxCatalogPages, no repeated cursor), FindPush (push delivery only);
//   - frames: Decode reads one notifications/events/* frame typed from its
//     raw params and validates events (string eventId of at most 1,024
//     characters, name, timestamp of at most 80, data present);
//   - Subscription: one logical subscription, opening → active ⇄
//     reconnecting → stopped | ended | failed, with its activation timer,
//     watchdog, retry budget, latest cursor, gap and error reporting;
//   - Window: the 10,000-id dedupe window of 64-bit hashes;
//   - Batcher, PrepareEvent, PrepareStatus: the events and status batchers
//     (500 ms fixed window, 256 items, 64,000 bytes) and the exact wakeup
//     format;
//   - Canonical: the key that makes two subscriptions identical.
//
// # Concurrency contract
//
// Nothing here runs by itself. There are no
// goroutines, channels, locks, contexts or clock reads. Every input carries
// what it needs (a decoded frame and "now", a stream's end, a timer's
// token) and returns effects for the owning actor to execute in order:
// OpenStream, CancelStream, Arm, Disarm, Deliver, Wake, Notify, Resolve,
// Reject. A Subscription, Window or Batcher is owned by one actor and used
// from its goroutine only. Decode, Prepare* and Canonical are plain
// functions, safe anywhere (a transport may decode on its reader).
//
// Values handed out in effects (an *EventItem, a Snapshot, a HostMessage)
// are not modified afterwards and may cross actor boundaries. The effect
// slice a Subscription returns is reused by its next call.
//
// # Timers
//
// A subscription has one timer slot (activation, watchdog or
// retry); a batcher has one (flush). Arm carries a token from a
// clock.Slot, the timer vocabulary supervisor/ shares; a firing whose token
// is stale is ignored, so an actor never has to win a race against a timer
// it replaced. The actor arms them on its injected clock.
//
// # Sizes
//
// "Characters" in frame validation are Unicode code points; every
// size of a wakeup (the 24,000 event threshold, original_characters, the
// 20,000 preview, the 2,000 error cut, the 64,000 batch budget) is bytes of
// the UTF-8 JSON encoding without HTML escaping, and cuts never split a
// character.
package eventstream
