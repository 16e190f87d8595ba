//go:build race

package engine

// The race detector slows single-goroutine loops tenfold and finds nothing
// in them: the randomized comparisons take fewer rounds under it.
func init() { randomRounds = func(n int) int { return n / 5 } }
