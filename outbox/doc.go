// Package outbox is the relay: it reads every slot's outbox stream in
// Redis and hands the events to a Sink (the ledger), exactly once. An event
// leaves its stream only after the sink committed it, and the sink skips
// one it has, so a relay that fails, is killed or runs beside another loses
// none and applies none twice (Relay, docs/events.md).
//
//	relay := outbox.NewRelay(rdb, led, &outbox.Options{Logger: log})
//	err := relay.Run(ctx) // until ctx is done
//
// Relay.Stats gives its counters and gauges for metrics; Relay.Round runs
// one pass, for tests and tools.
package outbox
