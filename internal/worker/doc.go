// Package worker is what the engine's background workers (the hold-expiry
// sweeper, transfer recovery) and the outbox relay share: the watch of each
// master's change notices (SyncWatches, WatchNotices), and a wait that ends
// with its context (Sleep).
package worker
