// Package lanes reads the names of a hot holder's lanes (DESIGN.md, Hot
// holders): lane i (1 to Max) of a hot holder X is the holder X#i, lane 0 is
// X itself. '#' is outside the id alphabet, so no client names a lane.
//
// It stands in for the instructions package's LaneHolder and ParentOf until
// the ledger and reconcile can use those.
package lanes

import "strconv"

// Max is the highest lane number: a hot holder has at most 64 lanes.
const Max = 63

// ParentOf splits a holder's name at its last '#': (X, i) for X#i, i from 1
// to Max written without a leading zero; (name, 0) for any other name.
// The ledger's migration 11 reads names the same way.
func ParentOf(name string) (parent string, lane int) {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] != '#' {
			continue
		}
		d := name[i+1:]
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 || n > Max || d[0] < '1' || d[0] > '9' || len(d) > 2 {
			return name, 0
		}
		return name[:i], n
	}
	return name, 0
}
