package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/ledger/ledgertest"
)

// hotStatement reads a hot holder's whole statement through the daemon in
// pages of limit, following next, with each page's raw events.
func hotStatement(t *testing.T, d *daemon, holder string, limit int) ([]ledger.AppliedInstruction, []json.RawMessage) {
	t.Helper()
	var evs []ledger.AppliedInstruction
	var raws []json.RawMessage
	q := "?limit=" + strconv.Itoa(limit)
	for {
		st, raw := statementPage(t, d, holder, q)
		assert.NotContains(t, raw, "next_after_seq", "a hot holder's statement pages by its cursor")
		var rawEvs []json.RawMessage
		require.NoError(t, json.Unmarshal(raw["events"], &rawEvs))
		evs, raws = append(evs, st.Events...), append(raws, rawEvs...)
		if st.Next == "" {
			return evs, raws
		}
		q = "?limit=" + strconv.Itoa(limit) + "&after=" + url.QueryEscape(st.Next)
	}
}

func TestStatement_AHotHoldersLanesMergedThroughTheDaemon(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	rig := newLedgerRig(t)
	d := startServe(t, nil, "--redis", rig.env["ENGINED_REDIS_ADDRS"], "--pg", rig.dsn)

	hot := newID("merchant")
	lanes := []string{hot + "#1", hot + "#2"}
	onLane := func(in instructions.Instruction, lane string) {
		t.Helper()
		require.NoError(t, ledgertest.ApplyOnLane(ctx, rig.rdb, rig.eng, in, lane))
	}
	d.mustApply(t, instructions.New(newID("open"), hot).Open())
	for i, l := range lanes {
		onLane(instructions.New("open-lane-"+strconv.Itoa(i+1), hot).Open(), l)
	}
	total := 3
	for i := range 6 {
		onLane(instructions.New("pay-"+strconv.Itoa(i), hot).Credit("CNY", "1.00"), lanes[i%2])
		total++
		if i%3 == 0 {
			d.mustApply(t, instructions.New("earn-"+strconv.Itoa(i), hot).EarnPoints("5"))
			total++
		}
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		evs, _ := hotStatement(t, d, hot, 1000)
		if len(evs) == total {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d of %d events reached the ledger", len(evs), total)
		time.Sleep(100 * time.Millisecond)
	}

	// The feed gives the ledger's order; a lane's events name the hot holder.
	a := d.do(t, http.MethodGet, "/v1/events?limit=1000", "")
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	var feed ledger.FeedPage
	strictJSON(t, string(a.body), &feed)
	var want []string
	for _, e := range feed.Events {
		if e.Holder == hot || e.Parent == hot {
			want = append(want, strconv.Itoa(e.Lane)+"/"+strconv.FormatInt(e.Seq, 10))
		}
	}
	require.Len(t, want, total)

	t.Run("pages of any size merge the lanes in the feed's order, each event naming its lane", func(t *testing.T) {
		for _, limit := range []int{1, 4, 1000} {
			evs, raws := hotStatement(t, d, hot, limit)
			var got []string
			for i, e := range evs {
				got = append(got, strconv.Itoa(e.Lane)+"/"+strconv.FormatInt(e.Seq, 10))
				var fields map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(raws[i], &fields))
				if e.Lane == 0 {
					assert.NotContains(t, fields, "lane", "lane 0's event names no lane")
				} else {
					assert.JSONEq(t, strconv.Itoa(e.Lane), string(fields["lane"]))
				}
			}
			assert.Equal(t, want, got, "limit %d", limit)
		}
	})
	t.Run("a cursor the statement did not give is refused", func(t *testing.T) {
		for _, q := range []string{"?after=5", "?after=", "?after=1.x", "?after=0.0&after_seq=0", "?after=0.0&after=0.0"} {
			wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+hot+"/events"+q, ""), 400, "INVALID_INSTRUCTION")
		}
	})
	t.Run("a lookup under the hot holder finds an instruction a lane applied", func(t *testing.T) {
		ans := lookupByID(t, d, hot, "pay-3")
		assert.Equal(t, "ledger", ans.Source, "Redis keeps the record under the lane")
		require.NotNil(t, ans.Instruction)
		assert.Equal(t, 2, ans.Instruction.Lane)
		assert.Equal(t, "1.00", ans.Instruction.Ops[0].Amount)
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+hot+"/instructions/pay-99", ""), 404, "INSTRUCTION_NOT_FOUND")
	})
	t.Run("engined events pages a hot holder's statement by --after", func(t *testing.T) {
		var got []string
		args := []string{"events", "--holder", hot, "--limit", "4"}
		for {
			code, out, errOut := rig.run(args...)
			require.Equal(t, exitOK, code, "%s", errOut)
			var st ledger.Statement
			strictJSON(t, out, &st)
			for _, e := range st.Events {
				got = append(got, strconv.Itoa(e.Lane)+"/"+strconv.FormatInt(e.Seq, 10))
			}
			if st.Next == "" {
				break
			}
			args = []string{"events", "--holder", hot, "--limit", "4", "--after", st.Next}
		}
		assert.Equal(t, want, got)
		code, _, errOut := rig.run("events", "--holder", hot, "--after", "0.0", "--after-seq", "3")
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, errOut, "--after and --after-seq: give one")
		// A cursor no page gave: it could not run (exit 1 is for a holder
		// the ledger does not know).
		code, _, errOut = rig.run("events", "--holder", hot, "--after", "7")
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, errOut, "--after")
	})
}
