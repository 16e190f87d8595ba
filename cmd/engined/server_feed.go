package main

import (
	"context"
	"net/http"

	"github.com/atomledger/atomledger/ledger"
)

// feed is GET /v1/events?after=C&limit=N&holder=H&transfer=T: a page of the
// feed from the ledger (docs/feed.md), 200 even when empty.
//
// Errors: 400 INVALID_INSTRUCTION (a cursor the feed did not hand out, a bad
// limit, an unknown query parameter), INVALID_ID (a bad holder or transfer);
// 401 UNAUTHENTICATED; 503 UNAVAILABLE (no ledger configured or reachable);
// 500 INTERNAL.
func (s *server) feed(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "after=C&limit=N&holder=H&transfer=T", "after", "limit", "holder", "transfer")
	if err != nil {
		writeError(w, err, true)
		return
	}
	limit, err := limitParam(q)
	if err != nil {
		writeError(w, err, true)
		return
	}
	fq := ledger.FeedQuery{After: q["after"], Limit: limit, Holder: q["holder"], Transfer: q["transfer"]}
	if err := fq.Check(); err != nil {
		writeError(w, err, true)
		return
	}
	led, err := s.ledger.get()
	if err != nil {
		writeError(w, err, true)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	page, err := led.Feed(ctx, fq)
	if err != nil {
		writeError(w, s.ledgerFailure(err), true)
		return
	}
	writeJSON(w, http.StatusOK, page)
}
