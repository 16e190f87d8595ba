package main

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/reconcile"
)

// ledgerReader is the daemon's read side of the ledger: the statement and
// the lookup of old instructions read it.
type ledgerReader struct {
	configured bool // --pg was given
	led        atomic.Pointer[ledger.Ledger]
}

// get gives the ledger, or UNAVAILABLE when the daemon has none (yet).
func (lr *ledgerReader) get() (*ledger.Ledger, error) {
	if l := lr.led.Load(); l != nil {
		return l, nil
	}
	msg := "the ledger is not reachable yet: retry"
	if !lr.configured {
		msg = "this daemon runs without a ledger (--pg): it has no statements and no feed"
	}
	return nil, instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp, "%s", msg)
}

// ledgerFailure reports a failure of PostgreSQL as UNAVAILABLE: the ledger
// may be back on the next try. The cause goes to the log, not to the client
// (it names the database's host and user). Errors of the contract pass as
// they are.
func (s *server) ledgerFailure(err error) error {
	var e *instructions.Error
	if errors.As(err, &e) {
		return err
	}
	s.log.Warn("ledger read failed", "code", instructions.CodeUnavailable, "error", err.Error())
	return &instructions.Error{Code: instructions.CodeUnavailable, OpIndex: instructions.NoOp,
		Message: "the ledger (PostgreSQL) did not answer: retry", Err: err}
}

// events is GET /v1/holders/{holder}/events?after_seq=N&limit=M: a page of
// the holder's statement from the ledger, 200 even when empty (a holder
// Redis knows whose events are not in the ledger yet). A hot holder's
// merges its lanes' and pages by after=<cursor>, the next of its page.
//
// Errors: 400 INVALID_ID, INVALID_INSTRUCTION (a bad after_seq, after or
// limit, both after_seq and after, an unknown query parameter); 401 UNAUTHENTICATED; 404 HOLDER_NOT_FOUND
// (neither Redis nor the ledger knows the holder); 503 UNAVAILABLE (no
// ledger configured or reachable, or Redis unreachable); 500 INTERNAL.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	holder := r.PathValue("holder")
	if err := checkReadID("holder", holder); err != nil {
		writeError(w, err, true)
		return
	}
	p, err := pageParams(r.URL.RawQuery)
	if err != nil {
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
	var st ledger.Statement
	if p.cursor != "" {
		st, err = led.StatementAfter(ctx, holder, p.cursor, p.limit)
	} else {
		st, err = led.Statement(ctx, holder, p.afterSeq, p.limit)
	}
	if errors.Is(err, instructions.ErrHolderNotFound) {
		// The ledger lags Redis: a holder it lacks may be on its way.
		if _, err = s.eng.State(ctx, holder); err == nil {
			st = ledger.Statement{Holder: holder, Events: []ledger.AppliedInstruction{}}
		}
	}
	if err != nil {
		writeError(w, s.ledgerFailure(err), true)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// page is where a statement page starts and how long it is.
type page struct {
	afterSeq int64  // after_seq, default 0
	cursor   string // after, a hot holder's statement cursor, default ""
	limit    int
}

// pageParams reads after_seq (default 0) or after (a cursor, which the
// ledger reads), and limit (default 100, at most 1000) from a raw query.
func pageParams(raw string) (page, error) {
	var p page
	q, err := queryParams(raw, "after_seq=N or after=CURSOR, and limit=M", "after_seq", "after", "limit")
	if err != nil {
		return p, err
	}
	if v, ok := q["after_seq"]; ok {
		if p.afterSeq, err = strconv.ParseInt(v, 10, 64); err != nil || p.afterSeq < 0 || !digitsOnly(v) {
			return p, badQuery("after_seq %q: want a seq, a whole number from 0 (the default: from the first)", v)
		}
	}
	if v, ok := q["after"]; ok {
		if _, seq := q["after_seq"]; seq {
			return p, badQuery("after and after_seq: give one (after, the next of a hot holder's statement page)")
		}
		if err := ledger.CheckStatementCursor(v); err != nil {
			return p, err
		}
		p.cursor = v
	}
	p.limit, err = limitParam(q)
	return p, err
}

// limitParam reads limit (default 100, at most 1000) of a query.
func limitParam(q map[string]string) (int, error) {
	v, ok := q["limit"]
	if !ok {
		return ledger.DefaultStatementLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > ledger.MaxStatementLimit || !digitsOnly(v) {
		return 0, badQuery("limit %q: want a whole number from 1 to %d (default %d)", v, ledger.MaxStatementLimit, ledger.DefaultStatementLimit)
	}
	return n, nil
}

// queryParams reads a raw query whose parameters may only be the allowed
// ones, each given once (shape shows them in the refusal). Any other
// parameter, one given twice, or a query that does not parse is refused: a
// misspelt one would otherwise be ignored without a word (url.URL.Query
// drops a pair with a bad escape or a ";").
func queryParams(raw, shape string, allowed ...string) (map[string]string, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, badQuery("the query does not parse: want %s, each escaped, separated by &", shape)
	}
	out := map[string]string{}
	for k, vs := range q {
		if !slices.Contains(allowed, k) {
			return nil, badQuery("unknown query parameter %q: this route takes %s", k, strings.Join(allowed, ", "))
		}
		if len(vs) > 1 {
			return nil, badQuery("query parameter %s is given %d times: give it once", k, len(vs))
		}
		out[k] = vs[0]
	}
	return out, nil
}

func badQuery(format string, args ...any) error {
	return instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp, format, args...)
}

// digitsOnly refuses the signs and spaces strconv would take.
func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func checkReadID(what, id string) error {
	if err := instructions.CheckID(instructions.NoOp, what, id); err != nil {
		return err // not the nil *Error as a non-nil error
	}
	return nil
}

// instruction is GET /v1/holders/{holder}/instructions/{id}: the recorded
// answer while Redis remembers the id, else the applied instruction from the
// ledger (reconcile.FindInstruction). 200 for a rejection too: the lookup
// found what happened.
//
// Errors: 400 INVALID_ID; 401 UNAUTHENTICATED; 404 INSTRUCTION_NOT_FOUND
// (neither Redis nor the ledger has it); 503 UNAVAILABLE (Redis, or a
// configured ledger, unreachable); 500 INTERNAL.
func (s *server) instruction(w http.ResponseWriter, r *http.Request) {
	holder, id := r.PathValue("holder"), r.PathValue("id")
	for _, v := range [2][2]string{{"holder", holder}, {"instruction id", id}} {
		if err := checkReadID(v[0], v[1]); err != nil {
			writeError(w, err, true)
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	var led func() (*ledger.Ledger, error)
	if s.ledger.configured {
		led = s.ledger.get
	}
	f, err := reconcile.FindInstruction(ctx, s.eng, led, holder, id)
	if errors.Is(err, engine.ErrInstructionNotFound) && led == nil {
		e := *asError(err)
		e.Message += ", and this daemon has no ledger (--pg) to look further"
		err = &e
	}
	if err != nil {
		writeError(w, s.ledgerFailure(err), true)
		return
	}
	if f.Error != nil {
		f.Error = asError(f.Error)
	}
	writeJSON(w, http.StatusOK, f)
}

// openLedgerReader opens the daemon's read side of the ledger in the
// background, retrying until PostgreSQL answers, and gives a function that
// closes it.
func (s *server) openLedgerReader(ctx context.Context, cfg *Config) (closeIt func()) {
	s.ledger.configured = cfg.PGDSN != ""
	if !s.ledger.configured {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if l := openLedger(ctx, cfg, s.log); l != nil {
			s.ledger.led.Store(l)
		}
	}()
	return func() {
		cancel()
		<-done
		if l := s.ledger.led.Load(); l != nil {
			l.Close()
		}
	}
}
