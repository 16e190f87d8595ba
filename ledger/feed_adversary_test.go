package ledger_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
)

// TestFeedAdversary_ALanesEventsAreReadByItsHolder: before the fix, the feed hands out
// the events of lane 1 of the hot holder "hot" with "holder": "hot#1" (and
// accepts their cursors back as after), but a reader that then asks for
// that holder's events, FeedQuery{Holder: "hot#1"} (GET
// /v1/events?holder=hot%231, engined tail --holder 'hot#1'), is refused
// INVALID_ID: Check validates the filter with instructions.CheckID, which
// refuses '#', where the cursor is validated by validHolder, which knows
// lanes. holder=hot gives only lane 0's events, so a lane's events cannot
// be had through the holder filter at all.
//
// docs/feed.md, A page: "`holder` (only that holder's events)", and "An
// event of lane i (1 to 63) of a hot holder `X` has the holder `X#i`".
// The contract: the filter takes every holder name the feed hands out (validHolder
// in FeedQuery.check), and gives that lane's events.
func TestFeedAdversary_ALanesEventsAreReadByItsHolder(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	hot, lane1 := &history{holder: "hot"}, &history{holder: "hot#1"}
	writeAll(t, l, []map[string]string{hot.open(), lane1.open(), lane1.credit("pay-1", 700), lane1.credit("pay-2", 300)})

	all := readFeed(t, l, ledger.FeedQuery{})
	var want []string
	for _, e := range all {
		if e.Holder == "hot#1" {
			want = append(want, e.Holder+"/"+strconv.FormatInt(e.Seq, 10))
			assert.Equal(t, "hot", e.Parent)
		}
	}
	require.Equal(t, []string{"hot#1/1", "hot#1/2", "hot#1/3"}, want, "the feed hands out the lane's events under holder hot#1")
	// The lane's cursor is taken back as after: the feed knows the name.
	_, err := l.Feed(ctx, ledger.FeedQuery{After: all[len(all)-1].Cursor})
	require.NoError(t, err)

	page, err := l.Feed(ctx, ledger.FeedQuery{Holder: "hot#1"})
	require.NoError(t, err, "holder=hot#1, the holder the feed itself gave these events, is refused")
	assert.Equal(t, want, keys(page.Events))
}

// TestFeedAdversary_ACursorTheFeedNeverHandedOutIsRefused: before the fix, a cursor well
// formed but naming a place the ledger never had (an xid no transaction of
// the server has taken yet, for a holder the ledger does not know) is
// taken as after: the feed answers an empty page whose next is that cursor,
// and keeps doing so while events are written below it. A consumer whose
// saved cursor was corrupted (a digit changed) or forged silently skips
// every event up to that xid, for good.
//
// docs/feed.md, A page: "An unknown parameter, one given twice, or a cursor
// the feed did not hand out is 400 `INVALID_INSTRUCTION`." The contract: refused
// (parseFeedCursor checks only the syntax; Feed could check the cursor's
// (holder, seq, xid) against ledger.instructions, one primary key read, or
// at least refuse an xid at or above pg_current_xact_id()).
func TestFeedAdversary_ACursorTheFeedNeverHandedOutIsRefused(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l := openLedger(t)
	h := &history{holder: "forged-feed"}
	writeAll(t, l, []map[string]string{h.open()})

	var next uint64
	require.NoError(t, l.Pool().QueryRow(ctx, "SELECT pg_current_xact_id()::text::bigint").Scan(&next))
	forged := strconv.FormatUint(next+1_000_000, 10) + ".1.nobody-ever"
	page, err := l.Feed(ctx, ledger.FeedQuery{After: forged})
	if err == nil {
		writeAll(t, l, []map[string]string{h.credit("c-2", 1)})
		later, err2 := l.Feed(ctx, ledger.FeedQuery{After: forged})
		require.NoError(t, err2)
		t.Errorf("a cursor the feed never handed out (xid %d ahead of the server's next) was taken: page %v, next %q; "+
			"after an event was written, still %d events: a reader holding it skips everything below it",
			1_000_000, keys(page.Events), page.Next, len(later.Events))
		return
	}
	requireCode(t, err, instructions.CodeInvalidInstruction)
}
