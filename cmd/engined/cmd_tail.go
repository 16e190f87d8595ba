package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/worker"
	"github.com/atomledger/atomledger/ledger"
)

func tailUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined tail [--after C] [--follow] [--holder H] [--transfer T] [flags]

Tail prints the feed of the PostgreSQL ledger (--pg) on stdout, one JSON
object a line: every holder's applied instructions, oldest first, each with
its cursor, holder, id, seq, server time, counterparty, memo, transfer and
movements in decimals (docs/feed.md). It never skips an event: an event
committed later comes after every cursor already printed.

To resume, pass the cursor of the last line handled as --after. With
--follow it waits for new events until interrupted (SIGINT, SIGTERM), and
retries while PostgreSQL is down once it has started; so
"engined tail --follow | PRODUCER" feeds any queue that reads lines. When
the reader of a pipe goes away, tail ends as any filter does (SIGPIPE).

Exit status: 0 at the end of the feed (or once interrupted with --follow),
1 when the ledger (without --follow) or stdout failed, 2 for a bad
invocation (a cursor this ledger never handed out too) or a ledger it
cannot open.

Flags:

  --after C
        start after cursor C (default "": from the first event)
  --follow
        wait for new events instead of stopping at the end
  --holder H
        only the events of holder H
  --transfer T
        only the parts of transfer T
  --poll DURATION
        with --follow, how often to look for new events at the end (default 500ms)

`)
	printConfigUsage(w)
}

// runTail is "engined tail".
func runTail(args []string, c cli) int {
	f := newCommandFlags("tail", c, tailUsage)
	after := f.fs.String("after", "", "")
	follow := f.fs.Bool("follow", false, "")
	holder := f.fs.String("holder", "", "")
	transfer := f.fs.String("transfer", "", "")
	poll := f.fs.Duration("poll", 500*time.Millisecond, "")
	cfg, status := f.parseLedger(args)
	if cfg == nil {
		return status
	}
	if *poll <= 0 {
		return f.fail("--poll %v: want a positive duration", *poll)
	}
	q := ledger.FeedQuery{After: *after, Holder: *holder, Transfer: *transfer, Limit: ledger.MaxStatementLimit}
	if err := q.Check(); err != nil {
		return f.fail("%s", asError(err).Message)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(c.stderr, nil))
	led, err := ledger.Open(ctx, cfg.PGDSN, &ledger.Options{Logger: log, Assets: cfg.Assets})
	if err != nil {
		return f.fail("%v", err)
	}
	defer led.Close()
	out := bufio.NewWriter(c.stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	err = followFeed(ctx, led, q, *follow, *poll, log, func(page ledger.FeedPage) error {
		for _, e := range page.Events {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write stdout: %w", err)
		}
		return nil
	}, nil)
	var bad *instructions.Error
	switch {
	case err == nil || ctx.Err() != nil:
	case errors.As(err, &bad):
		return f.fail("%s", bad.Message) // a cursor this ledger never handed out: a bad invocation too
	default:
		fmt.Fprintf(c.stderr, "engined tail: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// followFeed reads the feed from q.After and hands each page with events
// to handle, in order. Without follow it returns nil at the first empty
// page; with follow it waits poll at the end and asks again, and retries
// while PostgreSQL fails (backing off to 30s), until ctx is done, calling
// empty (when not nil) with the cursor of each empty page. An error of
// handle ends it.
func followFeed(ctx context.Context, led *ledger.Ledger, q ledger.FeedQuery, follow bool, poll time.Duration, log *slog.Logger,
	handle func(ledger.FeedPage) error, empty func(after string)) error {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		page, err := led.Feed(ctx, q)
		var e *instructions.Error
		switch {
		case err != nil && (!follow || errors.As(err, &e)):
			return err
		case err != nil:
			backoff = min(max(2*backoff, time.Second), 30*time.Second)
			log.Warn("feed: the ledger did not answer, retrying", "error", err, "in", backoff)
			worker.Sleep(ctx, backoff)
			continue
		}
		backoff = 0
		if len(page.Events) == 0 {
			if !follow {
				return nil
			}
			if empty != nil {
				empty(q.After)
			}
			worker.Sleep(ctx, poll)
			continue
		}
		if err := handle(page); err != nil {
			return err
		}
		q.After = page.Next
	}
	return ctx.Err()
}
