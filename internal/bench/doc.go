// Package bench measures atomledger against the baselines its design claims
// to beat, side by side in one run, and reports ratios: the machines it runs
// on are shared and noisy, so an absolute figure says little and a ratio of
// two figures taken a second apart says a lot. engined bench prints its
// Report; docs/benchmarks.md explains each part.
//
// # Basics
//
// Run starts a local Redis Cluster (or uses the one it is given) and runs the
// parts in order: script_cost (the server's own time per call of a four-op
// checkout against a single-key deduct script, from INFO commandstats, with
// an optional breakdown of the checkout by truncated variants of the
// script), pipeline and concurrent (the engine against raw FCALL of the
// same arguments encoded in advance), http (the daemon process against the
// library), contention (four ways to deduct from one hot account), transfer
// (a two-part trade across masters against one instruction), memory
// (bytes per typical holder) and relay (the outbox rate PostgreSQL keeps up
// with). Where a figure is taken several times, phases alternate and the
// median counts.
//
// # Caveats
//
// A run writes holders named bench-*, their idempotency records and outbox
// events, resets the servers' statistics (CONFIG RESETSTAT) and, on a cluster
// it started itself, flushes it between parts. Point it only at a scratch
// cluster and a scratch PostgreSQL database.
//
// Nothing here asserts a timing: the tests check that each part runs and
// counts right, never how fast.
package bench
