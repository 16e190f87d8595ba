package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
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
	err      error  // the engine's door's error
	raw      string // the JSON door's outcome as the library answered it
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
	o := conf3Outcome{code: string(e.Code), replayed: e.Replayed, err: err}
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
	o := conf3Outcome{replayed: n == 1, raw: out}
	if parts := strings.SplitN(out, "\n", 4); parts[0] == "err" {
		require.Len(t, parts, 4, "%q", out)
		o.code = parts[1]
		if i, err := strconv.Atoi(parts[2]); err == nil && i >= 0 {
			o.opIndex = &i
		}
	}
	return o
}

// conf3Holder opens a holder for case c, unless the case wants it unopened.
func conf3Holder(t *testing.T, f contracttest.File, c contracttest.Case, door string) string {
	t.Helper()
	if c.Unopened {
		h := newID("c3")
		t.Cleanup(func() { checkInvariants(t, h) })
		return h
	}
	return conf3Open(t, f, door, nil, c.Suspend)
}

// conf3Open opens a holder with the fixture's setup and extra through door
// (the JSON door's holders are set up through it too), makes its hold h-exp
// and coupon c-hexp expired, in the hash and in the expiry index, and
// suspends it if asked.
func conf3Open(t *testing.T, f contracttest.File, door string, extra []map[string]any, suspend bool) string {
	t.Helper()
	ctx := context.Background()
	h := newID("c3")
	t.Cleanup(func() { checkInvariants(t, h) })
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
	send(f.SetupText(t, h, id, door == contracttest.DoorJSON, extra), id)
	contracttest.Expire(t, rdb, h)
	require.NoError(t, rdb.ZAddXX(ctx, cluster.Expiry(cluster.HolderSlot(h)),
		redis.Z{Score: contracttest.Expired, Member: h + " " + contracttest.ExpiredHold}).Err())
	if suspend {
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
	f := contracttest.Load[contracttest.File](t, "../testdata/conformance3/cases.json")
	for _, door := range []string{contracttest.DoorEngine, contracttest.DoorJSON} {
		for _, c := range f.Cases {
			if !c.Runs(door) {
				continue
			}
			t.Run(door+"/"+c.Name, func(t *testing.T) {
				h := conf3Holder(t, f, c, door)
				id := c.ID(newID("c3"))
				text := c.Text(t, h, id, door == contracttest.DoorJSON)
				sendText := func(text []byte) conf3Outcome {
					if door == contracttest.DoorJSON {
						return conf3JSONDoor(t, h, id, text)
					}
					return conf3Engine(t, text)
				}
				send := func() conf3Outcome { return sendText(text) }
				// conflict: once the id has an answer, another body under it
				// is IDEMPOTENCY_CONFLICT, naming no op, changing nothing.
				conflict := func() {
					t.Helper()
					before := conf3Snapshot(t, h)
					o := sendText(c.OtherText(t, h, id, door == contracttest.DoorJSON))
					assert.Equal(t, string(instructions.CodeIdempotencyConflict), o.code, "another body under the id")
					assert.Nil(t, o.opIndex, "a conflict names no op")
					assert.Equal(t, before, conf3Snapshot(t, h), "a conflict changed the holder")
				}
				var seq0 int64
				if !c.Unopened {
					seq0 = state(t, h).Seq
				}
				before := conf3Snapshot(t, h)
				got := send()
				if c.Code != "" {
					assert.Equal(t, c.Code, got.code, "%s", text)
					if got.err != nil {
						assert.ErrorIs(t, got.err, instructions.Code(c.Code), "errors.Is with the code's sentinel")
					}
					assert.Equal(t, c.OpIndex, got.opIndex, "op index")
					assert.False(t, got.replayed)
					assert.Equal(t, before, conf3Snapshot(t, h), "the rejection changed the holder")
					n, err := rdb.Exists(ctx, cluster.Tx(h, id)).Result()
					require.NoError(t, err)
					assert.Equal(t, c.Recorded(), n == 1, "the rejection recorded under its id")
					if c.Unopened {
						assert.Empty(t, keysOfHolder(t, h), "nothing is written for an unknown holder")
						_, err := eng.State(ctx, h)
						assert.ErrorIs(t, err, engine.ErrHolderNotFound, "State of an unknown holder")
					}
					again := send()
					assert.Equal(t, c.Code, again.code, "sent again")
					assert.Equal(t, c.Recorded(), again.replayed, "sent again: replayed")
					assert.Equal(t, before, conf3Snapshot(t, h), "sent again, the rejection changed the holder")
					if c.Recorded() {
						conflict()
					}
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
				assert.Equal(t, got.raw, again.raw, "the JSON door's replay is its first answer")
				if got.result != nil {
					first := contracttest.Decode(t, got.result)
					first["replayed"] = true
					assert.Equal(t, first, contracttest.Decode(t, again.result), "a replay is the first answer")
				}
				assert.Equal(t, after, conf3Snapshot(t, h), "a replay changed the holder")
				conflict()
			})
		}
	}
}

// DESIGN.md's rules of transfers, each a case of
// testdata/conformance3/transfers.json, through engine.Transfer: a transfer
// refused before it starts, with its code; else its status and, aborted,
// its error's code, part and op, with every holder's figures as they were
// and nothing written for a holder that does not exist; committed, the part
// of each holder's state the case names. GetTransfer then reads the same
// status, and the same transfer sent again is its first answer, replayed.
func TestConformance3_TransfersThroughTheEngine(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	f := contracttest.Load[contracttest.File](t, "../testdata/conformance3/cases.json")
	tf := contracttest.Load[contracttest.TransferFile](t, "../testdata/conformance3/transfers.json")
	for _, c := range tf.Cases {
		t.Run(c.Name, func(t *testing.T) {
			holders := map[string]string{contracttest.Ghost: newID("ghost")}
			ghost := holders[contracttest.Ghost]
			values := map[string]instructions.State{}
			for _, name := range contracttest.Holders {
				holders[name] = conf3Open(t, f, contracttest.DoorEngine, c.Setup[name], c.Suspended(name))
				values[name] = valueOf(state(t, holders[name]))
			}
			id := newID("t")
			tr, err := instructions.DecodeTransfer(c.Text(t, id, holders))
			if err == nil {
				var st engine.TransferState
				st, err = eng.Transfer(ctx, tr)
				if c.Status != "" {
					require.NoError(t, err)
					c.Check(t, st, false)
					got, err := eng.GetTransfer(ctx, id)
					require.NoError(t, err)
					assert.Equal(t, c.Status, got.Status, "GetTransfer")
					again, err := eng.Transfer(ctx, tr)
					require.NoError(t, err)
					c.Check(t, again, true)
				}
			}
			if c.Status == "" {
				var e *instructions.Error
				require.True(t, errors.As(err, &e), "%v", err)
				assert.Equal(t, c.Code, string(e.Code), "%v", e)
			}
			if c.Status != engine.TransferCommitted {
				for _, name := range contracttest.Holders {
					assert.Equal(t, values[name], valueOf(state(t, holders[name])), "holder %s changed", name)
				}
			}
			// Nothing is written for an unknown holder but, where its part
			// was refused, the fence of that part's step (docs/transfers.md,
			// "Fences for unknown holders": a departure from DESIGN.md's
			// "nothing is ever written for an unknown holder", kept so that a
			// stalled driver's step cannot apply once the holder is opened).
			for _, k := range keysOfHolder(t, ghost) {
				assert.Contains(t, []string{cluster.Tx(ghost, "x:"+id+":p"), cluster.Tx(ghost, "x:"+id+":c")}, k,
					"a key of an unknown holder")
			}
			assert.Empty(t, readRaw(t, ghost).Events, "an event of an unknown holder")
			for name, want := range c.Want {
				b, err := json.Marshal(state(t, holders[name]))
				require.NoError(t, err)
				contracttest.Contains(t, want, b)
			}
		})
	}
}

// An overflow of frozen funds or points says it is the frozen figure that
// would pass 2^53-1, and gives that figure (not the available one).
func TestConformance3_OverflowOfFrozenSaysFrozen(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "100.00").Freeze("CNY", "11.00", "h1", 0).Credit("CNY", "90071992547320.91").
			EarnPoints("9007199254740991").FreezePoints("5", "h1").EarnPoints("5")
	})
	e := applyErr(t, newIn(h).Freeze("CNY", "90071992547398.92", "h2", 0))
	assert.Equal(t, instructions.CodeOverflow, e.Code)
	assert.Equal(t, "freeze 90071992547398.92 CNY: frozen CNY would pass 2^53-1 minor units (now 11.00)", e.Message)
	e = applyErr(t, newIn(h).FreezePoints("9007199254740987", "h2"))
	assert.Equal(t, instructions.CodeOverflow, e.Code)
	assert.Equal(t, "freeze_points 9007199254740987: frozen points would pass 2^53-1 minor units (now 5)", e.Message)
	e = applyErr(t, newIn(h).Credit("CNY", "0.01"))
	assert.Equal(t, "credit 0.01 CNY: CNY would pass 2^53-1 minor units (now 90071992547409.91)", e.Message)
}

// DESIGN.md: "Expiry times come from the Redis server clock (TIME)" and
// "the hold's ttl_ms is given by the op that creates it": through the
// engine's door and the JSON door, a hold's expires_ms is the server's
// time of the run plus the creating op's ttl_ms, whatever a later op of
// the same instruction gives.
func TestConformance3_HoldExpiryFromTheServerClock(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	const ttl = 60000
	for _, door := range []string{contracttest.DoorEngine, contracttest.DoorJSON} {
		t.Run(door, func(t *testing.T) {
			h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
				return in.Credit("CNY", "10.00").EarnPoints("10")
			})
			id := newID("exp")
			amount := "1.00"
			if door == contracttest.DoorJSON {
				amount = "100"
			}
			text := []byte(`{"id":"` + id + `","holder":"` + h + `","ops":[` +
				`{"op":"freeze","asset":"CNY","amount":"` + amount + `","hold":"o1","ttl_ms":` + strconv.Itoa(ttl) + `},` +
				`{"op":"freeze_points","amount":"1","hold":"o1","ttl_ms":1}]}`)
			t0 := serverNowMs(t)
			var o conf3Outcome
			if door == contracttest.DoorJSON {
				o = conf3JSONDoor(t, h, id, text)
			} else {
				o = conf3Engine(t, text)
			}
			t1 := serverNowMs(t)
			require.Empty(t, o.code)
			exp := state(t, h).Holds["o1"].ExpiresMs
			assert.GreaterOrEqual(t, exp, t0+ttl, "expires_ms is the server's time of the run plus the creating op's ttl_ms")
			assert.LessOrEqual(t, exp, t1+ttl, "expires_ms is the server's time of the run plus the creating op's ttl_ms")
			score, err := rdb.ZScore(ctx, cluster.Expiry(cluster.HolderSlot(h)), h+" o1").Result()
			require.NoError(t, err)
			assert.Equal(t, float64(exp), score, "the expiry index says the same")
		})
	}
}
