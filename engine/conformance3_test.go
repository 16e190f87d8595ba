package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/contracttest"
	"github.com/atomledger/atomledger/lua"
)

// conf3Outcome is what one door answered: a code ("" for a result), the op
// it names (nil for none), whether it was replayed, and the result in the
// contract's shape (the engine's door only).
type conf3Outcome struct {
	code     string
	opIndex  *int
	replayed bool
	result   []byte
}

// conf3Engine sends text through the engine's door: Decode, then Apply.
func conf3Engine(t *testing.T, text []byte) conf3Outcome {
	t.Helper()
	in, err := instructions.Decode(text)
	var res instructions.Result
	if err == nil {
		res, err = eng.Apply(context.Background(), in)
	}
	if err == nil {
		b, err := json.Marshal(res)
		require.NoError(t, err)
		return conf3Outcome{replayed: res.Replayed, result: b}
	}
	var e *instructions.Error
	require.True(t, errors.As(err, &e), "%v", err)
	o := conf3Outcome{code: string(e.Code), replayed: e.Replayed}
	if e.OpIndex != instructions.NoOp {
		o.opIndex = &e.OpIndex
	}
	return o
}

// conf3JSONDoor sends text through FCALL apply_json with the contract's keys
// for holder and id.
func conf3JSONDoor(t *testing.T, holder, id string, text []byte) conf3Outcome {
	t.Helper()
	v, err := rdb.FCall(context.Background(), lua.FuncApplyJSON, jsonKeys(holder, id), string(text)).Slice()
	require.NoError(t, err)
	require.Len(t, v, 2)
	n, _ := v[0].(int64)
	out, _ := v[1].(string)
	o := conf3Outcome{replayed: n == 1}
	if parts := strings.SplitN(out, "\n", 4); parts[0] == "err" {
		require.Len(t, parts, 4, "%q", out)
		o.code = parts[1]
		if i, err := strconv.Atoi(parts[2]); err == nil && i >= 0 {
			o.opIndex = &i
		}
	}
	return o
}

// conf3Holder opens a holder with the fixture's setup through door (the JSON
// door's holders are set up through it too), makes its hold h-exp and coupon
// c-hexp expired, in the hash and in the expiry index, and suspends it if
// the case says so.
func conf3Holder(t *testing.T, f contracttest.File, c contracttest.Case, door string) string {
	t.Helper()
	ctx := context.Background()
	h := newID("c3")
	t.Cleanup(func() { checkInvariants(t, h) })
	if c.Unopened {
		return h
	}
	send := func(text []byte, id string) {
		var o conf3Outcome
		if door == contracttest.DoorJSON {
			o = conf3JSONDoor(t, h, id, text)
		} else {
			o = conf3Engine(t, text)
		}
		require.Empty(t, o.code, "setup of %s: %s", h, text)
	}
	id := newID("setup")
	send(f.SetupText(t, h, id, door == contracttest.DoorJSON), id)
	key := cluster.Holder(h)
	hold, err := rdb.HGet(ctx, key, "h:"+contracttest.ExpiredHold).Result()
	require.NoError(t, err)
	_, rest, _ := strings.Cut(hold, "|")
	exp := strconv.Itoa(contracttest.Expired)
	require.NoError(t, rdb.HSet(ctx, key, "h:"+contracttest.ExpiredHold, exp+"|"+rest,
		"c:"+contracttest.ExpiredCoupon, "held:"+contracttest.ExpiredHold+"|"+exp).Err())
	require.NoError(t, rdb.ZAddXX(ctx, cluster.Expiry(cluster.HolderSlot(h)),
		redisZ(contracttest.Expired, h+" "+contracttest.ExpiredHold)).Err())
	if c.Suspend {
		id := newID("suspend")
		send([]byte(`{"id":"`+id+`","holder":"`+h+`","ops":[{"op":"suspend"}]}`), id)
	}
	return h
}

// conf3Snapshot is everything of the holder a rejection must leave as it
// was: its hash (seq and digest included), its events, its expiry entries.
func conf3Snapshot(t *testing.T, h string) string {
	t.Helper()
	b, err := json.Marshal(readRaw(t, h))
	require.NoError(t, err)
	return string(b)
}

// DESIGN.md's rules, each a case of testdata/conformance3/cases.json, through
// the engine's door and the library's JSON door: the code and op of each
// rejection, the holder's whole state unchanged by it, recorded under its
// id only when the script judged a holder that exists, and replayed so; for
// an instruction that applies, the part of the state and of the result the
// case names, seq one more, and a replay that changes nothing.
func TestConformance3_EveryRuleThroughTheEngineAndTheJSONDoor(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	f := contracttest.Load(t, "../testdata/conformance3/cases.json")
	for _, door := range []string{contracttest.DoorEngine, contracttest.DoorJSON} {
		for _, c := range f.Cases {
			if !c.Runs(door) {
				continue
			}
			t.Run(door+"/"+c.Name, func(t *testing.T) {
				h := conf3Holder(t, f, c, door)
				id := c.ID(newID("c3"))
				text := c.Text(t, h, id, door == contracttest.DoorJSON)
				send := func() conf3Outcome {
					if door == contracttest.DoorJSON {
						return conf3JSONDoor(t, h, id, text)
					}
					return conf3Engine(t, text)
				}
				var seq0 int64
				if !c.Unopened {
					seq0 = state(t, h).Seq
				}
				before := conf3Snapshot(t, h)
				got := send()
				if c.Code != "" {
					assert.Equal(t, c.Code, got.code, "%s", text)
					assert.Equal(t, c.OpIndex, got.opIndex, "op index")
					assert.False(t, got.replayed)
					assert.Equal(t, before, conf3Snapshot(t, h), "the rejection changed the holder")
					n, err := rdb.Exists(ctx, cluster.Tx(h, id)).Result()
					require.NoError(t, err)
					assert.Equal(t, c.Recorded(), n == 1, "the rejection recorded under its id")
					if c.Unopened {
						assert.Empty(t, keysOfHolder(t, h), "nothing is written for an unknown holder")
					}
					again := send()
					assert.Equal(t, c.Code, again.code, "sent again")
					assert.Equal(t, c.Recorded(), again.replayed, "sent again: replayed")
					assert.Equal(t, before, conf3Snapshot(t, h), "sent again, the rejection changed the holder")
					return
				}
				require.Empty(t, got.code, "%s", text)
				assert.False(t, got.replayed)
				st, err := eng.State(ctx, h)
				require.NoError(t, err)
				assert.Equal(t, seq0+1, st.Seq, "seq")
				b, err := json.Marshal(st)
				require.NoError(t, err)
				contracttest.Contains(t, c.Want, b)
				if got.result != nil {
					res := contracttest.Decode(t, got.result)
					assert.Equal(t, json.Number(strconv.FormatInt(st.Seq, 10)), res["seq"], "the result's seq")
					if c.Result != nil {
						contracttest.Contains(t, c.Result, got.result)
					}
				}
				after := conf3Snapshot(t, h)
				again := send()
				assert.Empty(t, again.code)
				assert.True(t, again.replayed, "sent again: replayed")
				assert.Equal(t, after, conf3Snapshot(t, h), "a replay changed the holder")
			})
		}
	}
}
