package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/atomledger/atomledger/reconcile"
)

// exitDrift is reconcile's status when it found drift.
const exitDrift = 1

func reconcileUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined reconcile [--out FILE] [flags]

Reconcile compares every holder in Redis with the PostgreSQL ledger (--pg):
the same seq must come with the same digest, status, balances, points,
coupons and holds; Redis ahead means events in flight (counted, not drift)
while each of those events is still in the outbox or already in the ledger,
else it was lost on its way (lost_in_relay, drift, with the seqs);
PostgreSQL ahead means Redis lost acknowledged writes; a holder may be
missing on either side; a holder the ledger refused events of, where the two
differ, has a forked history (diverged). An event the ledger set aside (it
could not apply it: docs/ledger.md says how to repair one) is drift, listed
with its reason. It also checks that every instruction's entries sum
to zero per asset and that every account is the sum of its entries, over
what was written since its last run that found the books clean.

A cross-holder transfer whose clearing account is not zero in the ledger
(some parts' commits are in, others not) is in flight while it is younger
than --transfer-timeout or events of one of its holders are still on their
way; past it, with nothing on its way, it is unbalanced (drift).

It prints a summary table on stdout, a progress bar on a terminal, and with
--out writes the whole report as JSON. Exit status: 0 without drift, 1 with
drift, 2 when it could not run.

Flags:

  --out FILE
        write the JSON report to FILE
`)
	printConfigUsage(w)
}

// runReconcile is "engined reconcile".
func runReconcile(args []string, c cli) int {
	f := newCommandFlags("reconcile", c, reconcileUsage)
	out := f.fs.String("out", "", "write the JSON report to FILE")
	cfg, status := f.parseLedger(args)
	if cfg == nil {
		return status
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	eng, led, closeAll, err := connectLedger(ctx, cfg)
	if err != nil {
		return f.fail("%v", err)
	}
	defer closeAll()
	rep, err := reconcile.Run(ctx, eng, led, reconcileOptions(progressOut(c.stderr), cfg.TransferTimeout))
	if err != nil {
		return f.fail("%v", err)
	}
	printSummary(c.stdout, rep)
	if *out != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
			return f.fail("%v", err)
		}
	}
	if rep.Drift {
		return exitDrift
	}
	return exitOK
}

// progressOut gives where the progress bar goes: stderr when it is a
// terminal, else nowhere.
func progressOut(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return w
	}
	return nil
}

// reconcileOptions gives the options of reconcile.Run: a progress bar on
// progress, if not nil.
func reconcileOptions(progress io.Writer, transferTimeout time.Duration) *reconcile.Options {
	opt := &reconcile.Options{TransferTimeout: transferTimeout}
	if progress == nil {
		return opt
	}
	var bar *progressbar.ProgressBar
	opt.Progress = func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(progress),
				progressbar.OptionSetDescription("reconcile"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
		}
		_ = bar.Set(done)
		if done == total {
			_ = bar.Finish()
		}
	}
	return opt
}

// printSummary prints the report as a table, then each event set aside.
func printSummary(w io.Writer, rep *reconcile.Report) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.AppendHeader(table.Row{"check", "count", "drift"})
	t.AppendRow(table.Row{"holders", rep.Holders, ""})
	t.AppendRow(table.Row{"in sync", rep.InSync, ""})
	t.AppendRow(table.Row{"redis ahead (events in flight)", fmt.Sprintf("%d (%d events)", rep.Counts[reconcile.KindInFlight], rep.EventsInFlight), "no"})
	t.AppendRow(table.Row{"redis ahead, events gone from the outbox (lost in relay)", rep.Counts[reconcile.KindLostInRelay], yes(rep.Counts[reconcile.KindLostInRelay])})
	t.AppendRow(table.Row{"postgresql ahead (redis lost writes)", rep.Counts[reconcile.KindPGAhead], yes(rep.Counts[reconcile.KindPGAhead])})
	t.AppendRow(table.Row{"missing in redis", rep.Counts[reconcile.KindMissingInRedis], yes(rep.Counts[reconcile.KindMissingInRedis])})
	t.AppendRow(table.Row{"same seq, figures differ", rep.Counts[reconcile.KindMismatch], yes(rep.Counts[reconcile.KindMismatch])})
	t.AppendRow(table.Row{"histories forked (ledger refused events)", rep.Counts[reconcile.KindDiverged], yes(rep.Counts[reconcile.KindDiverged])})
	t.AppendRow(table.Row{"transfers in flight (clearing account not zero yet)", rep.Counts[reconcile.KindTransferInFlight], "no"})
	t.AppendRow(table.Row{"transfers unbalanced past the timeout", rep.Counts[reconcile.KindTransferUnbalanced], yes(rep.Counts[reconcile.KindTransferUnbalanced])})
	t.AppendRow(table.Row{"instructions not summing to zero", len(rep.Unbalanced), yes(len(rep.Unbalanced))})
	t.AppendRow(table.Row{"accounts not the sum of their entries", len(rep.AccountDrift), yes(len(rep.AccountDrift))})
	refused := 0
	for _, n := range rep.Refused {
		refused += int(n)
	}
	t.AppendRow(table.Row{"events refused by the ledger (conflicts, set aside)", refused, yes(refused)})
	t.AppendRow(table.Row{"events parked behind a gap", rep.Parked, "no"})
	t.AppendRow(table.Row{"events set aside (their holders wait)", len(rep.SetAside), yes(len(rep.SetAside))})
	verdict := "no drift"
	if rep.Drift {
		verdict = "DRIFT"
	}
	t.AppendFooter(table.Row{"result", verdict, fmt.Sprintf("%d ms", rep.DurationMs)})
	t.Render()
	for _, e := range rep.SetAside {
		fmt.Fprintf(w, "set aside: holder %s seq %d (entry %s, row %d, %s): %s\n", e.Holder, e.Seq, e.Entry, e.ID, e.SetAside.UTC().Format(time.RFC3339), e.Reason)
	}
}

func yes(n int) string {
	if n > 0 {
		return "yes"
	}
	return "no"
}
