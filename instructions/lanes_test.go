package instructions

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lane's name is the holder's, the separator and the lane; lane 0 is the
// holder itself; ParentOf gives both back, and no lane's name is an id a
// client may send.
func TestLaneHolder_ParentOfUndoesIt(t *testing.T) {
	assert.Equal(t, "m", LaneHolder("m", 0))
	assert.Equal(t, "m#1", LaneHolder("m", 1))
	assert.Equal(t, "shop:88#63", LaneHolder("shop:88", 63))
	for _, h := range []string{"m", "shop:88", "a.b-c_d"} {
		for lane := range MaxLanes {
			name := LaneHolder(h, lane)
			p, l := ParentOf(name)
			assert.Equal(t, h, p, name)
			assert.Equal(t, lane, l, name)
			assert.Equal(t, lane == 0, ValidID(name), "%s: only lane 0 is a client's id", name)
		}
	}
	// Names that are no lane's are their own parents, lane 0.
	for _, name := range []string{"m#0", "m#01", "m#64", "m#", "m#x", "m#-1", "m# 1", "m#+1", "#3", "m#1#2"} {
		p, l := ParentOf(name)
		assert.Equal(t, name, p, name)
		assert.Zero(t, l, name)
	}
}

// lanes is a whole number 2 .. 64, on open (optional) and set_lanes
// (required) only; in the step it is the units.
func TestNormalize_Lanes(t *testing.T) {
	reg := MustParseAssets("CNY:2")
	for _, n := range []int{MinLanes, 3, MaxLanes} {
		got, err := New("o", "m").OpenHot(n).SetLanes(n).Normalize(reg)
		require.NoError(t, err, n)
		assert.Equal(t, []Step{{Op: OpOpen, Units: int64(n)}, {Op: OpSetLanes, Units: int64(n)}}, got.Steps)
	}
	got, err := New("o", "m").Open().Normalize(reg)
	require.NoError(t, err)
	assert.Equal(t, []Step{{Op: OpOpen}}, got.Steps, "open without lanes: a plain holder")

	for _, n := range []int{-2, 0, 1, 65, 1 << 40} {
		for _, in := range []Instruction{New("o", "m").OpenHot(n), New("o", "m").Credit("CNY", "1").SetLanes(n)} {
			_, err := in.Normalize(reg)
			e := requireCode(t, err, CodeInvalidInstruction)
			assert.Equal(t, len(in.Ops)-1, e.OpIndex)
			assert.Equal(t, "lanes must be 2 .. 64, not "+strconv.Itoa(n), e.Message)
		}
	}
	lanes := 4
	for _, c := range []struct {
		op   Op
		want string
	}{
		{Op{Op: OpCredit, Asset: "CNY", Amount: "1", Lanes: &lanes}, "credit takes no lanes"},
		{Op{Op: OpSuspend, Lanes: &lanes}, "suspend takes no lanes"},
		{Op{Op: OpSetLanes}, "set_lanes needs lanes"},
		{Op{Op: OpSetLanes, Asset: "CNY", Lanes: &lanes}, "set_lanes takes no asset"},
	} {
		_, err := Instruction{ID: "o", Holder: "m", Ops: []Op{c.op}}.Normalize(reg)
		e := requireCode(t, err, CodeInvalidInstruction)
		assert.Equal(t, c.want, e.Message)
	}
}

// set_lanes is refused on a suspended holder although it takes nothing out;
// open is not, and set_lanes is a client's op.
func TestOps_SetLanesIsRefusedWhenSuspended(t *testing.T) {
	for _, s := range Ops() {
		switch s.Name {
		case OpSetLanes:
			assert.True(t, s.Client)
			assert.False(t, s.TakesOut)
			assert.True(t, s.RefusedWhenSuspended())
		case OpOpen, OpCredit, OpSuspend, OpResume:
			assert.False(t, s.RefusedWhenSuspended(), s.Name)
		case OpDebit:
			assert.True(t, s.RefusedWhenSuspended(), s.Name)
		}
	}
}

// requireCode is err as an *Error of code.
func requireCode(t *testing.T, err error, code Code) *Error {
	t.Helper()
	e, ok := err.(*Error)
	require.True(t, ok, "%v", err)
	require.Equal(t, code, e.Code, e.Message)
	return e
}
