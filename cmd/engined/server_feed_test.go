package main

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
)

// feedThroughDaemon reads the feed through GET /v1/events from after to its
// end.
func feedThroughDaemon(t *testing.T, d *daemon, query url.Values) []ledger.FeedEvent {
	t.Helper()
	var out []ledger.FeedEvent
	for {
		a := d.do(t, http.MethodGet, "/v1/events?"+query.Encode(), "")
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		var page ledger.FeedPage
		strictJSON(t, string(a.body), &page)
		out = append(out, page.Events...)
		if len(page.Events) == 0 {
			return out
		}
		query.Set("after", page.Next)
	}
}

// tailLines reads the JSON lines engined tail printed.
func tailLines(t *testing.T, stdout string) []ledger.FeedEvent {
	t.Helper()
	var out []ledger.FeedEvent
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		var e ledger.FeedEvent
		strictJSON(t, line, &e)
		out = append(out, e)
	}
	return out
}

func feedKeys(evs []ledger.FeedEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Holder + "/" + strconv.FormatInt(e.Seq, 10)
	}
	return out
}

// TestFeed_ThroughTheDaemonAndTail: instructions and a payment through a
// daemon with a ledger; GET /v1/events, the library's Feed and engined tail
// --follow give the same events in the same order, each the statement's;
// tail resumes after a cursor, filters by holder, refuses a bad cursor.
func TestFeed_ThroughTheDaemonAndTail(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	rig := newLedgerRig(t)
	d := startServe(t, nil, "--redis", rig.env["ENGINED_REDIS_ADDRS"], "--pg", rig.dsn)
	tail := startEngined(t, "", rig.env, "tail", "--follow", "--poll", "50ms")

	alice, bob := newID("alice"), newID("bob")
	d.mustApply(t, instructions.New(newID("open"), alice).Open().Credit("CNY", "100.00").WithMemo("welcome"))
	d.mustApply(t, instructions.New(newID("open"), bob).Open())
	for range 3 {
		d.mustApply(t, instructions.New(newID("c"), alice).Credit("USDT", "0.000001"))
	}
	pay := newID("pay")
	a := d.do(t, http.MethodPost, "/v1/transfers", payment(pay, alice, bob, "5.25"))
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	lastA := d.mustApply(t, instructions.New(newID("last"), alice).Debit("CNY", "0.01"))
	lastB := d.mustApply(t, instructions.New(newID("last"), bob).Debit("CNY", "0.01"))
	waitInLedger(t, d, alice, lastA.Seq)
	waitInLedger(t, d, bob, lastB.Seq)
	total := int(lastA.Seq + lastB.Seq)

	got := feedThroughDaemon(t, d, url.Values{"limit": {"2"}})
	require.Len(t, got, total)
	lib, err := rig.led.Feed(ctx, ledger.FeedQuery{Limit: ledger.MaxStatementLimit})
	require.NoError(t, err)
	assert.Equal(t, lib.Events, got, "the route gives the library's feed")
	st, err := rig.led.Statement(ctx, alice, 0, 0)
	require.NoError(t, err)
	var mine []ledger.AppliedInstruction
	for _, e := range got {
		if e.Holder == alice {
			mine = append(mine, e.AppliedInstruction)
		}
	}
	assert.Equal(t, st.Events, mine, "an event is the statement's")
	var parts []string
	for _, e := range feedThroughDaemon(t, d, url.Values{"transfer": {pay}}) {
		assert.Equal(t, pay, e.Transfer)
		parts = append(parts, e.Holder)
	}
	assert.Contains(t, parts, alice)
	assert.Contains(t, parts, bob)
	assert.Equal(t, mine, func() []ledger.AppliedInstruction {
		var out []ledger.AppliedInstruction
		for _, e := range feedThroughDaemon(t, d, url.Values{"holder": {alice}, "limit": {"3"}}) {
			out = append(out, e.AppliedInstruction)
		}
		return out
	}())

	t.Run("tail --follow prints every event once, in the feed's order, and stops on SIGTERM", func(t *testing.T) {
		deadline := time.Now().Add(2 * time.Minute)
		for len(tailLines(t, tail.stdout.String())) < total {
			require.True(t, time.Now().Before(deadline), "tail printed %d of %d events:\n%s", len(tailLines(t, tail.stdout.String())), total, tail.stderr)
			time.Sleep(20 * time.Millisecond)
		}
		tail.signal(t, syscall.SIGTERM)
		assert.Equal(t, exitOK, tail.wait(t, time.Minute), "%s", tail.stderr)
		assert.Equal(t, got, tailLines(t, tail.stdout.String()))
	})
	t.Run("tail resumes after a cursor, filters by holder, and ends at the end", func(t *testing.T) {
		code, out, errs := rig.run("tail", "--after", got[3].Cursor)
		require.Equal(t, exitOK, code, errs)
		assert.Equal(t, got[4:], tailLines(t, out))
		code, out, errs = rig.run("tail", "--holder", bob)
		require.Equal(t, exitOK, code, errs)
		var want []string
		for seq := int64(1); seq <= lastB.Seq; seq++ {
			want = append(want, bob+"/"+strconv.FormatInt(seq, 10))
		}
		assert.Equal(t, want, feedKeys(tailLines(t, out)))
	})
	t.Run("bad queries are refused", func(t *testing.T) {
		code, out, errs := rig.run("tail", "--after", "not-a-cursor")
		assert.Equal(t, exitUsage, code)
		assert.Empty(t, out)
		assert.Contains(t, errs, `engined tail: after "not-a-cursor": not a cursor of the feed`)
		code, out, errs = rig.run("tail", "--after", "1.1.never-written")
		assert.Equal(t, exitUsage, code, "a cursor of no event of this ledger: %s", errs)
		assert.Empty(t, out)
		assert.Contains(t, errs, "no event of the ledger has this cursor")
		for query, code := range map[string]string{"after=1.2": "INVALID_INSTRUCTION", "limit=0": "INVALID_INSTRUCTION",
			"since=3": "INVALID_INSTRUCTION", "holder=%7Bx%7D": "INVALID_ID", "after=&after=": "INVALID_INSTRUCTION"} {
			wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/events?"+query, ""), http.StatusBadRequest, code)
		}
	})
}
