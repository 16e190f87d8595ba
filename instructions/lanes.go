package instructions

import (
	"strconv"
	"strings"
)

// A hot holder X of N lanes keeps its spending state in lane 0, the holder X
// itself, and receives credits into lanes 1 .. N-1, holders of their own
// named X#1 ... X#N-1, each in its own slot. LaneSeparator is outside the id
// alphabet (ValidID), so that no client can name a lane.
const (
	MinLanes      = 2
	MaxLanes      = 64
	LaneSeparator = "#"
)

// LaneHolder is the name of lane lane of holder: holder itself for lane 0,
// holder#lane for the others.
func LaneHolder(holder string, lane int) string {
	if lane == 0 {
		return holder
	}
	return holder + LaneSeparator + strconv.Itoa(lane)
}

// ParentOf undoes LaneHolder: the holder a lane belongs to and the lane's
// number. A name that is no lane's (no separator, nothing before it, or not
// followed by a lane number 1 .. MaxLanes-1 in its own digits) is its own
// parent, lane 0. The ledger reads names the same way (its migration 11).
func ParentOf(name string) (parent string, lane int) {
	i := strings.Index(name, LaneSeparator)
	if i < 1 {
		return name, 0
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 1 || n >= MaxLanes || strconv.Itoa(n) != name[i+1:] {
		return name, 0
	}
	return name[:i], n
}
