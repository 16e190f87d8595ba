package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/libcall"
	"github.com/atomledger/atomledger/lua"
	"github.com/atomledger/atomledger/stored"
)

// DESIGN.md, "Hot holders": open with lanes makes a hot holder, set_lanes
// raises its lanes, never lowers them; a raise keeps the count it ends in
// lanes_hist. Each case goes through both doors, on two holders set up alike
// through the engine: the same code, or the same change and event; a
// refusal changes neither hash.
func TestConformance_SetLanesThroughTheEngine(t *testing.T) {
	needRedis(t)
	require.NoError(t, eng.Load(context.Background()))
	hot := func(in instructions.Instruction) instructions.Instruction {
		return in.SetLanes(4).Credit("CNY", "10.00").EarnPoints("5")
	}
	suspended := func(in instructions.Instruction) instructions.Instruction { return hot(in).Suspend() }
	cases := []struct {
		name  string
		setup func(instructions.Instruction) instructions.Instruction
		ops   string
		code  instructions.Code
		lanes string // the holder's lanes after it, "" for none
	}{
		{"lowered", hot, `{"op":"set_lanes","lanes":3}`, instructions.CodeInvalidInstruction, "4"},
		{"lowered to 2", hot, `{"op":"set_lanes","lanes":2}`, instructions.CodeInvalidInstruction, "4"},
		{"equal", hot, `{"op":"set_lanes","lanes":4}`, "", "4"},
		{"raised", hot, `{"op":"set_lanes","lanes":8}`, "", "8"},
		{"raised with a credit", hot, `{"op":"credit","asset":"CNY","amount":"{A}"},{"op":"set_lanes","lanes":64}`, "", "64"},
		{"raised, then a spend that fails", hot, `{"op":"set_lanes","lanes":8},{"op":"spend_points","amount":"6"}`,
			instructions.CodeInsufficientPoints, "4"},
		{"suspended", suspended, `{"op":"set_lanes","lanes":8}`, instructions.CodeHolderSuspended, "4"},
		{"suspended, lowered", suspended, `{"op":"set_lanes","lanes":2}`, instructions.CodeHolderSuspended, "4"},
		{"suspended, equal", suspended, `{"op":"set_lanes","lanes":4}`, instructions.CodeHolderSuspended, "4"},
		{"resumed in the same instruction", suspended, `{"op":"resume"},{"op":"set_lanes","lanes":5}`, "", "5"},
		{"plain, raised", nil, `{"op":"set_lanes","lanes":2}`, "", "2"},
		{"plain, suspended", func(in instructions.Instruction) instructions.Instruction { return in.Suspend() },
			`{"op":"set_lanes","lanes":2}`, instructions.CodeHolderSuspended, ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("lanes-%02d", i)
			he, hd := newHolder(t, c.setup), newHolder(t, c.setup)
			text := func(holder, amount string) string {
				return strings.ReplaceAll(`{"id":"`+id+`","holder":"`+holder+`","ops":[`+c.ops+`]}`, "{A}", amount)
			}
			histE := holderHash(t, he)[stored.FieldLanesHist]
			code := engineAlone(t, he, hd, id, text(he, "1.00"), text(hd, "100"))
			assert.Equal(t, string(c.code), code)
			assert.Equal(t, c.lanes, holderHash(t, he)[stored.FieldLanes], "lanes")
			if c.code != "" || c.name == "equal" {
				assert.Equal(t, histE, holderHash(t, he)[stored.FieldLanesHist], "lanes_hist unchanged")
			}
		})
	}
}

// The message of a lowered count says both counts, in the user's words; the
// rejection is the script's, recorded under the id like any other.
func TestApply_SetLanesLoweredSaysBothCounts(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.SetLanes(6) })
	before := readRaw(t, h)
	in := newIn(h).SetLanes(3)
	_, err := eng.Apply(context.Background(), in)
	var e *instructions.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, instructions.CodeInvalidInstruction, e.Code)
	assert.Equal(t, 0, e.OpIndex)
	assert.Equal(t, "set_lanes 3: lanes 3 would lower 6: a hot holder's lanes are raised, never lowered", e.Message)
	assert.Equal(t, before, readRaw(t, h))
	_, err = eng.Apply(context.Background(), in)
	require.ErrorAs(t, err, &e)
	assert.True(t, e.Replayed, "the rejection is recorded")
}

// set_lanes on a holder that does not exist is HOLDER_NOT_FOUND through both
// doors, and nothing is written for it; open with lanes creates a hot holder
// (lanes, no lanes_hist) alike through both, its event read as any other.
func TestConformance_OpenHotAndUnknownHolderThroughTheEngine(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	for _, c := range []struct {
		ops, code, lanes string
	}{
		{`{"op":"set_lanes","lanes":4}`, "HOLDER_NOT_FOUND", ""},
		{`{"op":"earn_points","amount":"1"},{"op":"set_lanes","lanes":4}`, "HOLDER_NOT_FOUND", ""},
		{`{"op":"open","lanes":4},{"op":"earn_points","amount":"1"}`, "", "4"},
		{`{"op":"open","lanes":2},{"op":"set_lanes","lanes":2}`, "", "2"},
		{`{"op":"open","lanes":9},{"op":"set_lanes","lanes":3}`, "INVALID_INSTRUCTION", ""},
	} {
		he, hd := newID("ghost"), newID("ghost")
		t.Cleanup(func() { checkInvariants(t, he); checkInvariants(t, hd) })
		text := func(h string) string { return `{"id":"hot-open","holder":"` + h + `","ops":[` + c.ops + `]}` }
		assert.Equal(t, c.code, engineAlone(t, he, hd, "hot-open", text(he), text(hd)), c.ops)
		for _, h := range []string{he} {
			st := readRaw(t, h)
			if c.code != "" {
				assert.Empty(t, st.Hashes[hMeta], "%s: nothing written", c.ops)
				assert.Empty(t, keysOfHolder(t, h), "%s: nothing written", c.ops)
				continue
			}
			m := holderHash(t, h)
			assert.Equal(t, c.lanes, m[stored.FieldLanes], c.ops)
			assert.NotContains(t, m, stored.FieldLanesHist, "opened at its count: nothing ended")
			require.Len(t, st.Events, 1)
			ev := eventOf(t, st.Events[0])
			assert.Equal(t, "open", ev.ParsedOps()[0].Op)
			assert.Equal(t, c.lanes, ev.ParsedOps()[0].Units, "the event's open carries the lanes as its units")
		}
	}
}

// eventOf reads an outbox entry as the relay does.
func eventOf(t *testing.T, values map[string]any) stored.Event {
	t.Helper()
	f := map[string]string{}
	for k, v := range values {
		f[k] = fmt.Sprint(v)
	}
	ev, err := stored.ParseEvent(f)
	require.NoError(t, err)
	return ev
}

// A raise writes lanes_hist: the entries of earlier raises still within the
// call's idempotency ttl, then the count it ends and the server time. With
// the engine's ttl (a day) an entry of an hour ago stays and one of two days
// ago goes; through the JSON door with a ttl of a minute, the hour-old one
// goes too. The set_lanes events are read as any other.
func TestApply_SetLanesKeepsTheHistoryOfItsWindow(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	now := func() int64 {
		tm, err := rdb.Time(ctx).Result()
		require.NoError(t, err)
		return tm.UnixMilli()
	}
	// The engine's idempotency TTL trims the window: 24 h keeps the raise of
	// an hour ago, 1 minute drops it.
	for _, door := range []string{"engine", "engine of a 1 minute ttl"} {
		h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.SetLanes(4) })
		t0 := now()
		old, hour := strconv.FormatInt(t0-2*24*3600*1000, 10), strconv.FormatInt(t0-3600*1000, 10)
		// The history as earlier raises left it: 2 ended two days ago, 3 an hour ago.
		require.NoError(t, rdb.HSet(ctx, cluster.Holder(h), stored.FieldLanesHist, "2@"+old+";3@"+hour+";").Err())
		kept := "3@" + hour + ";"
		if door == "engine" {
			_, err := eng.Apply(ctx, newIn(h).SetLanes(7))
			require.NoError(t, err)
		} else {
			_, err := engine.New(rdb, &engine.Options{IdempotencyTTL: time.Minute}).Apply(ctx, newIn(h).SetLanes(7))
			require.NoError(t, err)
			kept = ""
		}
		t1 := now()
		m := holderHash(t, h)
		assert.Equal(t, "7", m[stored.FieldLanes], door)
		hist, ok := strings.CutPrefix(m[stored.FieldLanesHist], kept+"4@")
		require.True(t, ok, "%s: lanes_hist %q", door, m[stored.FieldLanesHist])
		ms, err := strconv.ParseInt(strings.TrimSuffix(hist, ";"), 10, 64)
		require.NoError(t, err, "%s: lanes_hist %q", door, m[stored.FieldLanesHist])
		assert.True(t, strings.HasSuffix(hist, ";") && ms >= t0 && ms <= t1, "%s: the raise's time %d, between %d and %d", door, ms, t0, t1)
		st := readRaw(t, h)
		ev := eventOf(t, st.Events[len(st.Events)-1])
		assert.Equal(t, `[{"op":"set_lanes","units":"7"}]`, ev.Ops)
		assert.Empty(t, ev.ParsedOps()[0].Moves, "set_lanes moves nothing")
	}
}

// routedCall is apply's arguments for in, routed by count ("" unrouted).
func routedCall(t *testing.T, in instructions.Instruction, count string) (keys []string, args []any) {
	t.Helper()
	keys, args, err := eng.Encode(in)
	require.NoError(t, err)
	args[libcall.Route] = count
	return keys, args
}

// fcallApply calls apply and gives its reply.
func fcallApply(t *testing.T, keys []string, args []any) (replayed int64, outcome string) {
	t.Helper()
	v, err := rdb.FCall(context.Background(), lua.FuncApply, keys, args...).Slice()
	require.NoError(t, err)
	require.Len(t, v, 2)
	return v[0].(int64), v[1].(string)
}

// hot.md, "Routing check in the library": apply refuses an instruction routed
// by a count that is not the holder's (its lanes, "1" when absent) with
// LANES_CHANGED and the holder's count, after the replay of a recorded id
// and the holder's existence, before anything else (a suspended holder
// too); it writes nothing and records nothing. A route equal to the count,
// or none, applies.
func TestApply_TheRouteCheck(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hot := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.SetLanes(4).Credit("CNY", "10.00")
	})
	plain := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	suspended := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.SetLanes(3).Credit("CNY", "10.00").Suspend()
	})
	ghost := newID("ghost")
	t.Cleanup(func() { checkInvariants(t, ghost) })

	refused := func(in instructions.Instruction, route, want string) {
		t.Helper()
		before := readRaw(t, in.Holder)
		keys, args := routedCall(t, in, route)
		replayed, out := fcallApply(t, keys, args)
		assert.Equal(t, int64(0), replayed)
		assert.Equal(t, want, out, "%s routed by %q", in.Holder, route)
		assert.Equal(t, before, readRaw(t, in.Holder), "nothing written")
		n, err := rdb.Exists(ctx, cluster.Tx(in.Holder, in.ID)).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "nothing recorded")
	}
	refused(newIn(hot).Credit("CNY", "1.00"), "1", "err\nLANES_CHANGED\n-1\n4")
	refused(newIn(hot).Credit("CNY", "1.00"), "8", "err\nLANES_CHANGED\n-1\n4")
	refused(newIn(hot).Debit("CNY", "100.00"), "2", "err\nLANES_CHANGED\n-1\n4")
	refused(newIn(plain).Credit("CNY", "1.00"), "4", "err\nLANES_CHANGED\n-1\n1")
	refused(newIn(suspended).Debit("CNY", "1.00"), "4", "err\nLANES_CHANGED\n-1\n3")
	refused(newIn(suspended).SetLanes(5), "1", "err\nLANES_CHANGED\n-1\n3")
	refused(newIn(ghost).Credit("CNY", "1.00"), "4", "err\nHOLDER_NOT_FOUND\n0\n")

	// The holder's own count, or none: applied.
	for _, c := range []struct{ h, route string }{{hot, "4"}, {hot, ""}, {plain, "1"}, {plain, ""}} {
		keys, args := routedCall(t, newIn(c.h).Credit("CNY", "1.00"), c.route)
		_, out := fcallApply(t, keys, args)
		assert.True(t, strings.HasPrefix(out, "ok\n"), "%s routed by %q: %q", c.h, c.route, out)
	}
	// A suspended holder of that count: the suspension, recorded.
	keys, args := routedCall(t, newIn(suspended).Debit("CNY", "1.00"), "3")
	_, out := fcallApply(t, keys, args)
	assert.Equal(t, "err\nHOLDER_SUSPENDED\n0\n", out)

	// An id applied, or refused, before: its record answers, whatever the route.
	in := newIn(hot).Credit("CNY", "2.00")
	keys, args = routedCall(t, in, "4")
	_, first := fcallApply(t, keys, args)
	require.True(t, strings.HasPrefix(first, "ok\n"), first)
	debit := newIn(hot).Debit("CNY", "1000.00")
	dkeys, dargs := routedCall(t, debit, "")
	_, refusal := fcallApply(t, dkeys, dargs)
	require.True(t, strings.HasPrefix(refusal, "err\nINSUFFICIENT_FUNDS\n"), refusal)
	before := readRaw(t, hot)
	for _, route := range []string{"1", "2", "8", ""} {
		args[libcall.Route], dargs[libcall.Route] = route, route
		replayed, out := fcallApply(t, keys, args)
		assert.Equal(t, int64(1), replayed, "route %q", route)
		assert.True(t, strings.HasPrefix(out, "ok\n"), "route %q: %q", route, out)
		replayed, out = fcallApply(t, dkeys, dargs)
		assert.Equal(t, int64(1), replayed, "route %q", route)
		assert.Equal(t, refusal, out, "route %q", route)
	}
	assert.Equal(t, before, readRaw(t, hot), "replays write nothing")
}
