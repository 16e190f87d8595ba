package main

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// A hot holder's statement read after a seq near 2^63-1, by the cursor
// (after=9223372036854775807.0, or a lane's entry that high) or by after_seq
// (lane 0's seq on a hot holder), answers 503 UNAVAILABLE "the ledger
// (PostgreSQL) did not answer: retry", and the daemon logs "bigint out of
// range (SQLSTATE 22003)": ledger/lanes.go mergedQuery bounds each lane's
// range by `seq <= f.after + $3`, which overflows bigint in PostgreSQL. A
// client told to retry gets the same 503 for ever, and monitoring sees a
// ledger outage that is not one. The same after_seq on a plain holder
// answers 200 with an empty page (statementQuery adds nothing to it).
//
// The contract: 200 with an empty page (nothing after that seq), or
// 400 INVALID_INSTRUCTION for a cursor the daemon will not read; never 503.
// docs/openapi.yaml, GET /v1/holders/{holder}/events: after_seq is an int64
// from 0 ("minimum: 0", no maximum) and a bad after is "400 INVALID_INSTRUCTION
// ... `after` not a cursor a page gave"; 503 is only "the daemon runs without a
// ledger (--pg), or PostgreSQL or Redis did not answer". docs/ledger.md, "A
// hot holder's statement": "`after_seq` on a hot holder is lane 0's seq".
func TestReadAdversary_AHotStatementAfterAHugeSeqIsAnEmptyPage(t *testing.T) {
	needRedis(t)
	rig := newLedgerRig(t)
	d := startServe(t, nil, "--redis", rig.env["ENGINED_REDIS_ADDRS"], "--pg", rig.dsn, "--hot-sweep", "0")

	hot, plain := newID("hot"), newID("plain")
	d.mustApply(t, instructions.New(newID("open"), hot).OpenHot(4))
	d.mustApply(t, instructions.New(newID("open"), plain).Open())
	// The ledger knows the lanes once an event of one has been relayed: the
	// statement is then the merged one.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		evs, _ := hotStatement(t, d, hot, 1000)
		laned := false
		for _, e := range evs {
			laned = laned || e.Lane > 0
		}
		if laned {
			break
		}
		require.True(t, time.Now().Before(deadline), "no lane's event reached the ledger")
		time.Sleep(100 * time.Millisecond)
	}
	waitInLedger(t, d, plain, 1)

	// The control: a plain holder's statement after the largest seq is empty.
	a := d.do(t, http.MethodGet, "/v1/holders/"+plain+"/events?after_seq=9223372036854775807", "")
	require.Equal(t, http.StatusOK, a.status, "%s", a)

	for _, q := range []string{
		"?after_seq=9223372036854775807",
		"?after_seq=9223372036854775000&limit=1000",
		"?after=" + url.QueryEscape("9223372036854775807.0"),
		"?after=" + url.QueryEscape("0.9223372036854775807"),
	} {
		a := d.do(t, http.MethodGet, "/v1/holders/"+hot+"/events"+q, "")
		assert.Contains(t, []int{http.StatusOK, http.StatusBadRequest}, a.status, "%s: %s", q, a)
		assert.NotEqual(t, "UNAVAILABLE", a.errorCode(), "%s: %s", q, a)
	}
}
