package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/reconcile"
)

// statementPage reads a page through the daemon, which must answer 200.
func statementPage(t *testing.T, d *daemon, holder, query string) (ledger.Statement, map[string]json.RawMessage) {
	t.Helper()
	a := d.do(t, http.MethodGet, "/v1/holders/"+holder+"/events"+query, "")
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	var st ledger.Statement
	strictJSON(t, string(a.body), &st)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(a.body, &raw))
	return st, raw
}

// lookupByID reads an instruction by id through the daemon, which must answer 200.
func lookupByID(t *testing.T, d *daemon, holder, id string) reconcile.Found {
	t.Helper()
	a := d.do(t, http.MethodGet, "/v1/holders/"+holder+"/instructions/"+id, "")
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	var ans reconcile.Found
	strictJSON(t, string(a.body), &ans)
	return ans
}

// waitInLedger waits until the ledger has the holder's instruction at seq.
func waitInLedger(t *testing.T, d *daemon, holder string, seq int64) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		a := d.do(t, http.MethodGet, "/v1/holders/"+holder+"/events?limit=1&after_seq="+strconv.FormatInt(seq-1, 10), "")
		if a.status == http.StatusOK && strings.Contains(string(a.body), `"seq":`+strconv.FormatInt(seq, 10)+",") {
			return
		}
		require.True(t, time.Now().Before(deadline), "seq %d of %s did not reach the ledger: %s", seq, holder, a)
		time.Sleep(100 * time.Millisecond)
	}
}

func TestStatement_ThroughTheDaemonWithALedger(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	rig := newLedgerRig(t)
	d := startServe(t, nil, "--redis", rig.env["ENGINED_REDIS_ADDRS"], "--pg", rig.dsn)

	alice, bob := newID("alice"), newID("bob")
	openID := newID("open")
	d.mustApply(t, instructions.New(openID, alice).Open().Credit("CNY", "100.00").EarnPoints("2000").WithMemo("welcome"))
	d.mustApply(t, instructions.New(newID("open"), bob).Open())
	// Thousands of events: pipelined, straight to Redis; the daemon's relay carries them.
	const credits = 2500
	var ins []instructions.Instruction
	for i := range credits {
		ins = append(ins, instructions.New("c-"+strconv.Itoa(i), alice).Credit("USDT", "0.000001"))
	}
	require.Equal(t, credits, rig.applyAll(t, ins))
	tooMuch := newID("too-much")
	rejected := d.post(t, instructionJSON(tooMuch, alice, `[{"op": "debit", "asset": "CNY", "amount": "1000000.00"}]`))
	require.Equal(t, http.StatusUnprocessableEntity, rejected.status, "%s", rejected)
	pay := newID("pay")
	a := d.do(t, http.MethodPost, "/v1/transfers", payment(pay, alice, bob, "5.25"))
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	last := d.mustApply(t, instructions.New(newID("last"), alice).Debit("CNY", "0.01"))
	waitInLedger(t, d, alice, last.Seq)
	bobState := d.state(t, bob)
	var bs instructions.State
	require.NoError(t, json.Unmarshal([]byte(bobState), &bs))
	waitInLedger(t, d, bob, bs.Seq)

	t.Run("the default page is 100 long and says where the next starts", func(t *testing.T) {
		st, _ := statementPage(t, d, alice, "")
		require.Len(t, st.Events, 100)
		assert.Equal(t, int64(1), st.Events[0].Seq)
		assert.Equal(t, int64(100), st.NextAfterSeq)
	})
	t.Run("pages of 1000 cover the history once, the last without next_after_seq", func(t *testing.T) {
		var seqs []int64
		after := int64(0)
		for {
			st, raw := statementPage(t, d, alice, "?limit=1000&after_seq="+strconv.FormatInt(after, 10))
			for _, e := range st.Events {
				seqs = append(seqs, e.Seq)
			}
			if st.NextAfterSeq == 0 {
				assert.NotContains(t, raw, "next_after_seq")
				break
			}
			require.Len(t, st.Events, 1000)
			after = st.NextAfterSeq
		}
		require.Len(t, seqs, int(last.Seq))
		for i, s := range seqs {
			require.Equal(t, int64(i+1), s)
		}
	})
	t.Run("at the boundary, one before the end and at the end", func(t *testing.T) {
		st, _ := statementPage(t, d, alice, "?limit=1&after_seq="+strconv.FormatInt(last.Seq-2, 10))
		assert.Equal(t, last.Seq-1, st.NextAfterSeq)
		st, _ = statementPage(t, d, alice, "?limit=1&after_seq="+strconv.FormatInt(last.Seq-1, 10))
		require.Len(t, st.Events, 1)
		assert.Zero(t, st.NextAfterSeq)
		_, raw := statementPage(t, d, alice, "?after_seq="+strconv.FormatInt(last.Seq, 10))
		assert.JSONEq(t, `[]`, string(raw["events"]))
	})
	t.Run("amounts are decimals, points whole, the memo kept", func(t *testing.T) {
		st, _ := statementPage(t, d, alice, "?limit=3")
		open := st.Events[0]
		assert.Equal(t, openID, open.ID)
		assert.Equal(t, "welcome", open.Memo)
		assert.Equal(t, "external", open.Counterparty)
		assert.Positive(t, open.TsMs)
		require.Len(t, open.Ops, 3)
		assert.Equal(t, ledger.StatementOp{Op: "credit", Asset: "CNY", Amount: "100.00",
			Movements: []ledger.Movement{{Asset: "CNY", From: "counterparty", To: "available", Amount: "100.00"}}}, open.Ops[1])
		assert.Equal(t, "2000", open.Ops[2].Amount)
		assert.Equal(t, "0.000001", st.Events[1].Ops[0].Amount, "USDT at scale 6")
	})
	t.Run("a transfer's steps name their transfer", func(t *testing.T) {
		st, _ := statementPage(t, d, bob, "")
		var steps []string
		for _, e := range st.Events {
			if e.Transfer != "" {
				assert.Equal(t, pay, e.Transfer)
				steps = append(steps, e.ID)
				if strings.HasSuffix(e.ID, ":c") {
					assert.Equal(t, "5.25", e.Ops[len(e.Ops)-1].Amount)
				}
			}
		}
		assert.Contains(t, steps, "x:"+pay+":c")
	})
	t.Run("an instruction by id: the recorded answer, then the ledger's", func(t *testing.T) {
		ans := lookupByID(t, d, alice, openID)
		assert.Equal(t, "redis", ans.Source)
		assert.Equal(t, "applied", ans.Status)
		require.NotNil(t, ans.Result)
		assert.Equal(t, int64(1), ans.Result.Seq)
		assert.Equal(t, "100.00", ans.Result.Balances["CNY"].Available)
		assert.True(t, ans.Result.Replayed)
		assert.Nil(t, ans.Instruction)

		ans = lookupByID(t, d, alice, tooMuch)
		assert.Equal(t, "redis", ans.Source)
		assert.Equal(t, "rejected", ans.Status)
		require.NotNil(t, ans.Error)
		assert.Equal(t, instructions.CodeInsufficientFunds, ans.Error.Code)
		assert.Equal(t, 0, ans.Error.OpIndex)

		require.NoError(t, rig.rdb.Del(ctx, cluster.Tx(alice, openID)).Err())
		ans = lookupByID(t, d, alice, openID)
		assert.Equal(t, "ledger", ans.Source)
		assert.Equal(t, "applied", ans.Status)
		require.NotNil(t, ans.Instruction)
		assert.Nil(t, ans.Result)
		assert.Equal(t, int64(1), ans.Instruction.Seq)
		assert.Equal(t, "100.00", ans.Instruction.Ops[1].Amount)

		ans = lookupByID(t, d, bob, "x:"+pay+":c")
		assert.Equal(t, "redis", ans.Source, "a transfer's step is looked up like any instruction")

		require.NoError(t, rig.rdb.Del(ctx, cluster.Tx(alice, tooMuch)).Err())
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+alice+"/instructions/"+tooMuch, ""), 404, "INSTRUCTION_NOT_FOUND")
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+alice+"/instructions/never-sent", ""), 404, "INSTRUCTION_NOT_FOUND")
	})
	t.Run("unknown holders are 404, bad input 400", func(t *testing.T) {
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+newID("nobody")+"/events", ""), 404, "HOLDER_NOT_FOUND")
		// A holder Redis has and the ledger not yet, its first event in
		// flight: the relay's write waits on a lock of the ledger's
		// instructions (reads go on), and the page is empty, not 404.
		lock, err := rig.led.Pool().Begin(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = lock.Rollback(ctx) })
		_, err = lock.Exec(ctx, "LOCK TABLE ledger.instructions IN EXCLUSIVE MODE")
		require.NoError(t, err)
		carol := newID("carol")
		d.mustApply(t, instructions.New(newID("open"), carol).Open())
		st, raw := statementPage(t, d, carol, "")
		assert.Equal(t, carol, st.Holder)
		assert.JSONEq(t, `[]`, string(raw["events"]))
		inFlight := 0
		entries, err := rig.rdb.XRange(ctx, cluster.Outbox(cluster.HolderSlot(carol)), "-", "+").Result()
		require.NoError(t, err)
		for _, e := range entries {
			if e.Values["holder"] == carol {
				inFlight++
			}
		}
		assert.Equal(t, 1, inFlight, "carol's event is in flight: in the outbox, not in the ledger")
		require.NoError(t, lock.Rollback(ctx))
		waitInLedger(t, d, carol, 1)
		for _, q := range []string{"?limit=0", "?limit=1001", "?limit=abc", "?limit=+5", "?after_seq=-1", "?after_seq=x",
			"?limit=1&limit=2", "?after=5", "?limit="} {
			wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+alice+"/events"+q, ""), 400, "INVALID_INSTRUCTION")
		}
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/a%7Bb%7D/events", ""), 400, "INVALID_ID")
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+alice+"/instructions/a%20b", ""), 400, "INVALID_ID")
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/a%20b/instructions/x", ""), 400, "INVALID_ID")
	})
	t.Run("engined events prints a page from the ledger", func(t *testing.T) {
		code, out, errOut := rig.run("events", "--holder", alice, "--after-seq", "5", "--limit", "3")
		require.Equal(t, exitOK, code, "%s", errOut)
		var st ledger.Statement
		strictJSON(t, out, &st)
		require.Len(t, st.Events, 3)
		assert.Equal(t, int64(6), st.Events[0].Seq)
		assert.Equal(t, int64(8), st.NextAfterSeq)
		code, out, _ = rig.run("events", "--holder", newID("nobody"))
		assert.Equal(t, exitRejected, code)
		assert.Contains(t, out, "HOLDER_NOT_FOUND")
		code, _, errOut = rig.run("events", "--holder", alice, "--limit", "0")
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, errOut, "--limit 0: want 1 to 1000")
		code, _, errOut = rig.run("events")
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, errOut, "--holder H is required")
	})
	t.Run("a transfer's step forgotten by Redis is found in the ledger", func(t *testing.T) {
		step := "x:" + pay + ":c"
		require.NoError(t, rig.rdb.Del(ctx, cluster.Tx(bob, step)).Err())
		ans := lookupByID(t, d, bob, step)
		assert.Equal(t, "ledger", ans.Source)
		assert.Equal(t, "applied", ans.Status)
		require.NotNil(t, ans.Instruction)
		assert.Equal(t, step, ans.Instruction.ID)
		assert.Equal(t, pay, ans.Instruction.Transfer)
		assert.Equal(t, "5.25", ans.Instruction.Ops[len(ans.Instruction.Ops)-1].Amount)
	})
	t.Run("a holder deleted from Redis: its statement is the ledger's", func(t *testing.T) {
		require.NoError(t, rig.rdb.Del(ctx, cluster.Holder(alice)).Err())
		st, _ := statementPage(t, d, alice, "?limit=2")
		require.Len(t, st.Events, 2)
		assert.Equal(t, openID, st.Events[0].ID)
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+alice, ""), 404, "HOLDER_NOT_FOUND")
	})
	t.Run("Redis down, the ledger up: the statement of a holder the ledger has, 503 for the rest", func(t *testing.T) {
		for _, m := range rig.c.MasterAddrs() {
			require.NoError(t, rig.c.Kill(m))
		}
		st, _ := statementPage(t, d, bob, "")
		assert.Equal(t, bs.Seq, st.Events[len(st.Events)-1].Seq, "bob's whole statement")
		// Only Redis can tell whether a holder the ledger lacks exists.
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+newID("nobody")+"/events", ""), 503, "UNAVAILABLE")
		// The recorded answer, Redis's, comes first: the lookup cannot tell
		// which source to trust without it.
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+bob+"/instructions/x:"+pay+":c", ""), 503, "UNAVAILABLE")
	})
}

func TestStatement_WithoutALedger(t *testing.T) {
	needRedis(t)
	d := startServe(t, nil)
	h := newID("h")
	open := d.mustApply(t, instructions.New(newID("open"), h).Open().Credit("CNY", "1.50"))
	a := d.do(t, http.MethodGet, "/v1/holders/"+h+"/events", "")
	wantErrorAnswer(t, a, 503, "UNAVAILABLE")
	assert.Contains(t, string(a.body), "--pg")
	ans := lookupByID(t, d, h, open.ID)
	assert.Equal(t, "redis", ans.Source)
	assert.Equal(t, "1.50", ans.Result.Balances["CNY"].Available)
	a = d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/never-sent", "")
	wantErrorAnswer(t, a, 404, "INSTRUCTION_NOT_FOUND")
	assert.Contains(t, string(a.body), "(ids are kept for 24h), and this daemon has no ledger (--pg)")
}

func TestStatement_LedgerUnreachable(t *testing.T) {
	needRedis(t)
	d := startServe(t, nil, "--pg", "postgres://ledger@"+deadAddr(t)+"/ledger?connect_timeout=1")
	h := newID("h")
	open := d.mustApply(t, instructions.New(newID("open"), h).Open())
	a := d.do(t, http.MethodGet, "/v1/holders/"+h+"/events", "")
	wantErrorAnswer(t, a, 503, "UNAVAILABLE")
	assert.Contains(t, string(a.body), "not reachable yet")
	assert.Equal(t, "redis", lookupByID(t, d, h, open.ID).Source, "what Redis remembers needs no ledger")
	wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/never-sent", ""), 503, "UNAVAILABLE")
}
