package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/atomledger/atomledger/ledger"
)

func repairUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined repair (--set-aside ID [--fields FILE --note TEXT] | --all) [flags]

Repair applies an event the ledger set aside (ID: its row in
ledger.set_aside, which "engined reconcile" lists), then the events of its
holder parked behind it, and marks the row resolved, in one transaction.

Without --fields the event is applied as it was read: for a cause since
removed on PostgreSQL's side. With --fields, FILE holds the event's fields
corrected, as a JSON object (start from the row's own:
  SELECT convert_from(fields, 'UTF8') FROM ledger.set_aside WHERE id = ID
and change what PostgreSQL refused, a memo holding \u0000 say); holder, seq
and digest must stay, since the holder's later events chain on that digest.
A changed event needs --note, which the row keeps: the ledger then holds the
event otherwise than Redis digested it. See docs/ledger.md.

--all applies every event set aside as it was read, oldest first, each with
the events parked behind it: after a cause on PostgreSQL's side that set
many aside is removed. Those it still cannot apply are listed on stderr.

Exit status: 0 when repaired, 1 when --all left some unrepaired, 2 when it
could not run (or the event given could not be repaired).

Flags:

  --set-aside ID
        the ledger.set_aside row of the event
  --fields FILE
        the event's fields, corrected
  --note TEXT
        why and how the event was changed
  --all
        every event set aside, as read
`)
	printConfigUsage(w)
}

// runRepair is "engined repair".
func runRepair(args []string, c cli) int {
	f := newCommandFlags("repair", c, repairUsage)
	id := f.fs.Int64("set-aside", 0, "the ledger.set_aside row of the event")
	file := f.fs.String("fields", "", "the event's fields, corrected")
	note := f.fs.String("note", "", "why and how the event was changed")
	all := f.fs.Bool("all", false, "every event set aside, as read")
	cfg, status := f.parseLedger(args)
	if cfg == nil {
		return status
	}
	if *all && (*id != 0 || *file != "" || *note != "") {
		return f.fail("--all applies every event as it was read: it takes no --set-aside, --fields or --note")
	}
	if !*all && *id <= 0 {
		return f.fail("--set-aside ID is required: the id of the event's row in ledger.set_aside (engined reconcile lists them)")
	}
	var fields map[string]string
	if *file != "" {
		data, err := os.ReadFile(*file)
		if err != nil {
			return f.fail("%v", err)
		}
		if err := json.Unmarshal(data, &fields); err != nil {
			return f.fail("%s: want a JSON object of strings, the event's fields: %v", *file, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	led, err := ledger.Open(ctx, cfg.PGDSN, nil)
	if err != nil {
		return f.fail("%v", err)
	}
	defer led.Close()
	if *all {
		return repairAll(ctx, led, c)
	}
	rep, err := led.Repair(ctx, *id, fields, *note)
	if err != nil {
		return f.fail("%v", err)
	}
	fmt.Fprintf(c.stdout, "repaired: applied %d (the event and %d parked behind it), still parked %d, set aside %d\n",
		rep.Applied, rep.Unparked, rep.Parked, rep.SetAside)
	return exitOK
}

// repairAll is "engined repair --all".
func repairAll(ctx context.Context, led *ledger.Ledger, c cli) int {
	set, err := led.SetAside(ctx, 100000)
	if err != nil {
		fmt.Fprintf(c.stderr, "engined repair: %v\n", err)
		return exitUsage
	}
	failed := 0
	for _, e := range set {
		rep, err := led.Repair(ctx, e.ID, nil, "")
		if err != nil {
			failed++
			fmt.Fprintf(c.stderr, "engined repair: set aside %d (holder %s seq %d) not repaired: %v\n", e.ID, e.Holder, e.Seq, err)
			continue
		}
		fmt.Fprintf(c.stdout, "repaired %d (holder %s seq %d): applied %d\n", e.ID, e.Holder, e.Seq, rep.Applied)
	}
	fmt.Fprintf(c.stdout, "repaired %d of %d\n", len(set)-failed, len(set))
	if failed > 0 {
		return exitDrift
	}
	return exitOK
}
