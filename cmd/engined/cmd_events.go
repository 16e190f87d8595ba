package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
)

func eventsUsage(w io.Writer) {
	fmt.Fprintf(w, `Usage: engined events --holder H [--after-seq N | --after CURSOR] [--limit M] [flags]

Events prints one page of a holder's statement from the PostgreSQL ledger
(--pg) as JSON, what GET /v1/holders/{holder}/events answers: the holder's
applied instructions from seq N+1, oldest first, at most M, each with its id,
seq, server time, counterparty, memo, transfer and movements, amounts in
decimals; and next_after_seq, the --after-seq of the next page, when there is
more. A hot holder's statement merges its lanes' histories in the ledger's
order, each event naming its lane (absent: lane 0), and gives next, the
--after of the next page, when there is more. The ledger has what the relay
delivered: Redis may be ahead.

Exit status: 0 for a page, 1 when the ledger does not know the holder (an
error object is printed), 2 when it could not run.

Flags:

  --holder H
        the holder
  --after-seq N
        start after seq N (default 0: from the first)
  --after CURSOR
        a hot holder's statement: start after CURSOR, the next of a page
  --limit M
        at most M instructions, 1 to %d (default %d)
`, ledger.MaxStatementLimit, ledger.DefaultStatementLimit)
	printConfigUsage(w)
}

// runEvents is "engined events".
func runEvents(args []string, c cli) int {
	f := newCommandFlags("events", c, eventsUsage)
	holder := f.fs.String("holder", "", "")
	after := f.fs.Int64("after-seq", 0, "")
	cursor := f.fs.String("after", "", "")
	limit := f.fs.Int("limit", ledger.DefaultStatementLimit, "")
	cfg, status := f.parseLedger(args)
	if cfg == nil {
		return status
	}
	if *holder == "" {
		return f.fail("--holder H is required")
	}
	if err := checkReadID("holder", *holder); err != nil {
		return f.fail("--holder: %s", asError(err).Message)
	}
	if *limit < 1 || *limit > ledger.MaxStatementLimit {
		return f.fail("--limit %d: want 1 to %d", *limit, ledger.MaxStatementLimit)
	}
	if *after < 0 {
		return f.fail("--after-seq %d: want 0 or more", *after)
	}
	if *cursor != "" && *after != 0 {
		return f.fail("--after and --after-seq: give one")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	led, err := ledger.Open(ctx, cfg.PGDSN, &ledger.Options{Assets: cfg.Assets})
	if err != nil {
		return f.fail("%v", err)
	}
	defer led.Close()
	var st ledger.Statement
	if *cursor != "" {
		st, err = led.StatementAfter(ctx, *holder, *cursor, *limit)
	} else {
		st, err = led.Statement(ctx, *holder, *after, *limit)
	}
	var e *instructions.Error
	switch {
	case errors.As(err, &e) && e.Code == instructions.CodeHolderNotFound:
		return printJSON(c, errorObject{Error: e}, exitRejected)
	case errors.As(err, &e): // a cursor no page gave
		return f.fail("--after: %s", e.Message)
	}
	if err != nil {
		return f.fail("%v", err)
	}
	return printJSON(c, st, exitOK)
}
