package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/reconcile"
)

// TestPrintSummary_EachKindOnItsRow: every finding kind is counted on a row
// of its own, and only those that are drift say so.
func TestPrintSummary_EachKindOnItsRow(t *testing.T) {
	rep := &reconcile.Report{Holders: 9, InSync: 1, EventsInFlight: 3, Counts: map[string]int{}, Drift: true,
		Unbalanced: []ledger.Imbalance{{}}, AccountDrift: []ledger.AccountDrift{{}}, Parked: 2, Refused: map[string]int64{"a": 2},
		SetAside: []ledger.SetAsideEvent{{Holder: "a", Seq: 4, Reason: "PostgreSQL refused it"}}}
	for _, k := range []string{reconcile.KindInFlight, reconcile.KindLostInRelay, reconcile.KindPGAhead, reconcile.KindMissingInRedis,
		reconcile.KindMismatch, reconcile.KindDiverged, reconcile.KindTransferInFlight, reconcile.KindTransferUnbalanced} {
		rep.Counts[k] = 1
	}
	var out bytes.Buffer
	printSummary(&out, rep)
	for row, drift := range map[string]string{
		`redis ahead \(events in flight\)\s*\|\s*1 \(3 events\)`:         "no",
		`\(lost in relay\)\s*\|\s*1`:                                     "yes",
		`postgresql ahead \(redis lost writes\)\s*\|\s*1`:                "yes",
		`missing in redis\s*\|\s*1`:                                      "yes",
		`same seq, figures differ\s*\|\s*1`:                              "yes",
		`histories forked \(ledger refused events\)\s*\|\s*1`:            "yes",
		`transfers in flight \(clearing account not zero yet\)\s*\|\s*1`: "no",
		`transfers unbalanced past the timeout\s*\|\s*1`:                 "yes",
		`instructions not summing to zero\s*\|\s*1`:                      "yes",
		`accounts not the sum of their entries\s*\|\s*1`:                 "yes",
		`events refused by the ledger \(conflicts, set aside\)\s*\|\s*2`: "yes",
		`events parked behind a gap\s*\|\s*2`:                            "no",
		`events set aside \(their holders wait\)\s*\|\s*1`:               "yes",
	} {
		assert.Regexp(t, regexp.MustCompile(row+`\s*\|\s*`+drift+`\s*\|`), out.String())
	}
	assert.Regexp(t, `(?i)result\s*\|\s*drift`, out.String())
	assert.Contains(t, out.String(), "set aside: holder a seq 4")
}
