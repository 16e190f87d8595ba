package ledger

// What the ledger stores compactly (migration 7): the parts of an event that
// other fields of its row already say. The view ledger.events gives every
// field back as Redis wrote it, so that each row's digest checks again;
// the sink writes here only what that view reads back exactly.

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/atomledger/atomledger/stored"
)

// partSteps names the step of a transfer part's id suffix, as its memo says it.
var partSteps = map[string]string{":p": "prepare", ":c": "commit", ":a": "abort"}

// partDerived tells whether a transfer part's id, counterparty and memo
// are what ledger.events derives from its transfer and step: the id
// x:<transfer>:<p, c or a>, the clearing account x:<transfer>, and
// "transfer <transfer>: <prepare, commit or abort>". The sink then stores
// the id's step alone (":c") and an empty counterparty and memo.
func partDerived(ev stored.Event) bool {
	hold := "x:" + ev.Xfer
	if ev.Xfer == "" || ev.CP != hold || len(ev.ID) != len(hold)+2 || ev.ID[:len(hold)] != hold {
		return false
	}
	step, ok := partSteps[ev.ID[len(hold):]]
	return ok && ev.Memo == "transfer "+ev.Xfer+": "+step
}

var (
	// opFull is a debit or a credit with its one movement, as the library
	// writes it; opShort is one without, which ledger.event_ops gives its
	// movement back.
	opFull  = regexp.MustCompile(`\{"op":"(debit|credit)","asset":"([A-Z0-9_]+)","units":"([0-9]+)","mv":\[\["([A-Z0-9_]+)","(avail|cp)","(avail|cp)","([0-9]+)"\]\]\}`)
	opShort = regexp.MustCompile(`\{"op":"(debit|credit)","asset":"[A-Z0-9_]+","units":"[0-9]+"\}`)
)

// compactOps leaves out the movement of each debit and credit whose
// movement is its asset and units between avail and cp in its direction,
// marking the text '*' (JSON never begins with it). Ops that already hold
// a debit or credit without its movement are kept as they are: the view
// would give them one.
func compactOps(ops string) string {
	if !strings.Contains(ops, `"mv":[[`) || opShort.MatchString(ops) {
		return ops
	}
	short := opFull.ReplaceAllStringFunc(ops, func(m string) string {
		g := opFull.FindStringSubmatch(m)
		from, to := "avail", "cp"
		if g[1] == "credit" {
			from, to = to, from
		}
		if g[4] != g[2] || g[7] != g[3] || g[5] != from || g[6] != to {
			return m
		}
		return `{"op":"` + g[1] + `","asset":"` + g[2] + `","units":"` + g[3] + `"}`
	})
	if short == ops {
		return ops
	}
	return "*" + short
}

// stateTail is the end of a state that touched no coupon and no hold.
const stateTail = `,"c":{},"h":{}}`

// compactState leaves out the head of a state, {"s":"<seq>","st":"active",
// (its seq is the row's), marking it '*', or '~' when its tail is
// stateTail, left out too. Any other state is kept as it is.
func compactState(seq int64, state string) string {
	rest, ok := strings.CutPrefix(state, `{"s":"`+strconv.FormatInt(seq, 10)+`","st":"active",`)
	if !ok {
		return state
	}
	if mid, ok := strings.CutSuffix(rest, stateTail); ok && mid != "" {
		return "~" + mid
	}
	return "*" + rest
}
