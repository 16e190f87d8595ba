package engine_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/atomledger/atomledger/instructions"
)

// An in-memory model of the contract (DESIGN.md), written from the contract
// alone, for TestModel_RandomInstructionsAgreeWithEngine. It borrows the
// instructions package's types (Instruction, Result, State, the codes) but none
// of its code: validation, amounts and formatting are done again here, so that
// a bug there shows as a disagreement rather than being copied into the model.
//
// Where the contract is silent the model takes what a payment system would
// expect; each such choice is marked "contract silent" below.

const (
	mMaxUnits = 1<<53 - 1 // largest amount and stored value, in minor units
	mPoints   = "points"  // the leg name of points in a hold
	mMaxOps   = 64
	mMaxMemo  = 256

	mActive    = "active"
	mSuspended = "suspended"
	mAvailable = "available"
	mUsed      = "used"
	mHeldBy    = "held:"
)

// mScales is the asset registry of the contract's default configuration
// (--assets), the one the package's engine runs with. Points have scale 0.
var mScales = map[string]int{"CNY": 2, "USD": 2, "EUR": 2, "USDT": 6, "BTC": 8}

var mIDSyntax = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// mTakesValueOut lists the ops a suspended holder refuses: "a suspended holder
// accepts credits, settle and release, nothing that takes value out". Freezing
// and locking take value out of what the holder can use; earning points and
// being granted a coupon are credits.
var mTakesValueOut = map[string]bool{
	"debit": true, "freeze": true, "freeze_points": true, "lock_coupon": true,
	"spend_points": true, "redeem_coupon": true,
}

// mOp is a validated op, amounts in minor units.
type mOp struct {
	op      string
	asset   string // credit, debit, freeze: the asset; settle, release: the leg, "" for the whole hold
	units   int64  // 0: no amount (settle or release of a whole leg)
	hold    string
	coupon  string
	ttl     int64 // ttl_ms, 0 for none
	expires int64 // grant_coupon's expires_ms, 0 for none
}

// mInstr is a validated instruction.
type mInstr struct {
	id, holder, counterparty, memo string
	ops                            []mOp
}

// body identifies what the instruction asks for: the same id with the same
// body is a replay, with another body a conflict. Amounts count by value, so
// "80.0" and "80.00" are the same body (contract silent on spelling; the
// value is what a client means, and a retry library may re-encode it).
func (n mInstr) body() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %q %q", n.id, n.holder, n.counterparty, n.memo)
	for _, o := range n.ops {
		fmt.Fprintf(&b, "|%q %q %d %q %q %d %d", o.op, o.asset, o.units, o.hold, o.coupon, o.ttl, o.expires)
	}
	return b.String()
}

// mFields says which fields each op takes: a asset, m amount, h hold, l leg,
// c coupon, t ttl_ms, e expires_ms. The op table names them; ttl_ms is taken
// by every op that can create a hold ("the hold's ttl_ms is given by the op
// that creates it"). A field an op does not take is INVALID_INSTRUCTION
// (contract silent: a payment system refuses what it would otherwise ignore).
var mFields = map[string]struct{ need, may string }{
	"open": {}, "suspend": {}, "resume": {},
	"credit": {"am", ""}, "debit": {"am", ""},
	"freeze": {"amh", "t"}, "freeze_points": {"mh", "t"}, "lock_coupon": {"ch", "t"},
	"settle": {"h", "lm"}, "release": {"h", "lm"},
	"earn_points": {"m", ""}, "spend_points": {"m", ""},
	"grant_coupon": {"c", "e"}, "redeem_coupon": {"c", ""},
}

// mFail is a rejection: its code and op index.
type mFail struct {
	code instructions.Code
	op   int
}

// mValidate checks what the engine checks before Redis. The contract orders
// these checks only as "before Redis, first of all"; the driver gives each
// invalid instruction a single defect, so their order among themselves does
// not matter.
func mValidate(in instructions.Instruction) (mInstr, *mFail) {
	n := mInstr{id: in.ID, holder: in.Holder, counterparty: in.Counterparty, memo: in.Memo}
	if n.counterparty == "" {
		n.counterparty = "external"
	}
	for _, id := range []string{n.id, n.holder, n.counterparty} {
		if !mIDSyntax.MatchString(id) {
			return n, &mFail{instructions.CodeInvalidID, instructions.NoOp}
		}
	}
	// A memo is UTF-8 of at most 256 bytes with no control characters.
	if len(n.memo) > mMaxMemo || !utf8.ValidString(n.memo) || strings.ContainsFunc(n.memo, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return n, &mFail{instructions.CodeInvalidInstruction, instructions.NoOp}
	}
	switch {
	case len(in.Ops) == 0:
		return n, &mFail{instructions.CodeInvalidInstruction, instructions.NoOp}
	case len(in.Ops) > mMaxOps:
		return n, &mFail{instructions.CodeTooManyOps, instructions.NoOp}
	}
	for i, op := range in.Ops {
		o, code := mValidateOp(op)
		if code != "" {
			return n, &mFail{code, i}
		}
		n.ops = append(n.ops, o)
	}
	return n, nil
}

func mValidateOp(op instructions.Op) (mOp, instructions.Code) {
	o := mOp{op: op.Op, hold: op.Hold, coupon: op.Coupon}
	f, ok := mFields[op.Op]
	if !ok {
		return o, instructions.CodeInvalidInstruction
	}
	var have string
	for _, p := range []struct {
		c  byte
		is bool
	}{{'a', op.Asset != ""}, {'m', op.Amount != ""}, {'h', op.Hold != ""}, {'l', op.Leg != ""},
		{'c', op.Coupon != ""}, {'t', op.TTLMs != nil}, {'e', op.ExpiresMs != nil}} {
		if p.is {
			have += string(p.c)
		}
	}
	for _, c := range f.need {
		if !strings.ContainsRune(have, c) {
			return o, instructions.CodeInvalidInstruction
		}
	}
	for _, c := range have {
		if !strings.ContainsRune(f.need+f.may, c) {
			return o, instructions.CodeInvalidInstruction
		}
	}
	if (op.Op == "settle" || op.Op == "release") && op.Amount != "" && op.Leg == "" {
		return o, instructions.CodeInvalidInstruction
	}
	for _, id := range []string{op.Hold, op.Coupon} {
		if id != "" && !mIDSyntax.MatchString(id) {
			return o, instructions.CodeInvalidID
		}
	}
	scale := 0
	switch {
	case op.Asset != "":
		s, ok := mScales[op.Asset] // "points" is a leg, not an asset
		if !ok {
			return o, instructions.CodeUnknownAsset
		}
		o.asset, scale = op.Asset, s
	case op.Leg != "":
		s, ok := mScales[op.Leg]
		if op.Leg == mPoints {
			s, ok = 0, true
		}
		if !ok {
			return o, instructions.CodeUnknownAsset
		}
		o.asset, scale = op.Leg, s
	}
	if op.Amount != "" {
		u, ok := mUnits(string(op.Amount), scale)
		if !ok {
			return o, instructions.CodeInvalidAmount
		}
		o.units = u
	}
	// Contract silent on the code of a ttl_ms or expires_ms below 1: INVALID_INSTRUCTION.
	if op.TTLMs != nil {
		if *op.TTLMs < 1 {
			return o, instructions.CodeInvalidInstruction
		}
		o.ttl = *op.TTLMs
	}
	if op.ExpiresMs != nil {
		if *op.ExpiresMs < 1 {
			return o, instructions.CodeInvalidInstruction
		}
		o.expires = *op.ExpiresMs
	}
	return o, ""
}

// mUnits reads a decimal string as minor units at scale: digits, optionally a
// point and more digits, no more fractional digits than the scale (even
// zeros), in 1 .. 2^53-1.
func mUnits(s string, scale int) (int64, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(x string) bool {
		for i := 0; i < len(x); i++ {
			if x[i] < '0' || x[i] > '9' {
				return false
			}
		}
		return x != ""
	}
	if !digits(whole) || dot && !digits(frac) || len(frac) > scale {
		return 0, false
	}
	all := strings.TrimLeft(whole+frac+strings.Repeat("0", scale-len(frac)), "0")
	if all == "" || len(all) > 16 {
		return 0, false
	}
	u, err := strconv.ParseInt(all, 10, 64)
	if err != nil || u > mMaxUnits {
		return 0, false
	}
	return u, true
}

// mFormat writes minor units of an asset (or points) at its scale.
func mFormat(units int64, leg string) string {
	scale := mScales[leg] // points: 0
	s := strconv.FormatInt(units, 10)
	if scale == 0 {
		return s
	}
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	return s[:len(s)-scale] + "." + s[len(s)-scale:]
}

type mHold struct {
	legs    map[string]int64 // asset code or points -> units left
	coupons []string         // in the order they were locked
	expires int64            // Unix ms by the server clock; 0: never
	born    bool             // created by the instruction being evaluated
	ttl     int64            // while born: its ttl_ms (its expiry is the server's now + ttl)
}

type mCoupon struct {
	state   string // available, used, held:<hold>
	expires int64  // 0: never
}

// mAccounts is everything an existing holder has.
type mAccounts struct {
	status          string
	seq             int64
	avail, frozen   map[string]int64
	pAvail, pFrozen int64
	coupons         map[string]*mCoupon
	holds           map[string]*mHold
}

func newAccounts() *mAccounts {
	return &mAccounts{status: mActive, avail: map[string]int64{}, frozen: map[string]int64{},
		coupons: map[string]*mCoupon{}, holds: map[string]*mHold{}}
}

func (a *mAccounts) clone() *mAccounts {
	c := *a
	c.avail, c.frozen = maps.Clone(a.avail), maps.Clone(a.frozen)
	c.coupons = make(map[string]*mCoupon, len(a.coupons))
	for id, cp := range a.coupons {
		v := *cp
		c.coupons[id] = &v
	}
	c.holds = make(map[string]*mHold, len(a.holds))
	for id, h := range a.holds {
		v := *h
		v.legs, v.coupons = maps.Clone(h.legs), slices.Clone(h.coupons)
		c.holds[id] = &v
	}
	return &c
}

// get and set read and write an account by leg name: an asset or points.
func (a *mAccounts) get(leg string) (avail, frozen int64) {
	if leg == mPoints {
		return a.pAvail, a.pFrozen
	}
	return a.avail[leg], a.frozen[leg]
}

func (a *mAccounts) set(leg string, avail, frozen int64) {
	if leg == mPoints {
		a.pAvail, a.pFrozen = avail, frozen
		return
	}
	a.avail[leg], a.frozen[leg] = avail, frozen
}

// holdFor is the hold a freeze, freeze_points or lock_coupon adds to: a new
// one, or one created earlier in the same instruction. A hold opened by an
// earlier instruction is HOLD_EXISTS, expired or not. A hold that an earlier
// op of the same instruction closed is gone ("a later op sees the effects of
// earlier ones"): naming it creates a new hold.
func (a *mAccounts) holdFor(op mOp, now int64, note func(string)) (*mHold, instructions.Code) {
	if h, ok := a.holds[op.hold]; ok {
		if !h.born {
			if expired(h.expires, now) {
				note("hold exists, expired")
			}
			return nil, instructions.CodeHoldExists
		}
		if op.ttl > 0 {
			note("ttl on a later op of a hold, ignored")
		}
		return h, ""
	}
	h := &mHold{legs: map[string]int64{}, born: true, ttl: op.ttl}
	if op.ttl > 0 {
		h.expires = now + op.ttl
	}
	a.holds[op.hold] = h
	return h, ""
}

func expired(expires, now int64) bool { return expires > 0 && now >= expires }

// mOutcome is the answer to an instruction: a result or a rejection.
type mOutcome struct {
	res      instructions.Result // when code is ""
	code     instructions.Code
	op       int
	replayed bool
	// notes name the rarer paths the instruction took, to show what a run
	// covered; they decide nothing.
	notes []string
	// pending: holds this instruction created with a ttl and left open, with
	// their ttl. Their expiry is the server's now + ttl, which the model cannot
	// know to the millisecond: the driver checks the engine's value against
	// the time window of the call and adopts it.
	pending map[string]int64
}

type mRecord struct {
	body string
	out  mOutcome
}

// modelHolder is one holder id: its accounts (nil while it does not exist)
// and its idempotency records.
type modelHolder struct {
	acc *mAccounts
	tx  map[string]mRecord
}

func newModelHolder() *modelHolder { return &modelHolder{tx: map[string]mRecord{}} }

// before decides what needs no clock: validation errors (first of all, never
// recorded), replays (the first outcome, marked replayed) and conflicts.
// decided is false when the ops must be evaluated (eval).
func (m *modelHolder) before(in instructions.Instruction) (n mInstr, out mOutcome, decided bool) {
	n, f := mValidate(in)
	if f != nil {
		return n, mOutcome{code: f.code, op: f.op}, true
	}
	if r, ok := m.tx[n.id]; ok {
		if r.body != n.body() {
			return n, mOutcome{code: instructions.CodeIdempotencyConflict, op: instructions.NoOp}, true
		}
		out := r.out
		out.replayed = true
		out.res.Replayed = true
		return n, out, true
	}
	return n, mOutcome{}, false
}

// expiries lists every expiry instant the outcome of n may depend on.
func (m *modelHolder) expiries(n mInstr) []int64 {
	var es []int64
	if m.acc != nil {
		for _, h := range m.acc.holds {
			es = append(es, h.expires)
		}
		for _, c := range m.acc.coupons {
			es = append(es, c.expires)
		}
	}
	for _, o := range n.ops {
		es = append(es, o.expires)
	}
	return es
}

// eval applies the ops of n at server time now (Unix ms) to a copy of the
// accounts: the outcome, and the accounts after it (nil for a rejection,
// which changes nothing). Ops apply in order, each seeing the effects of the
// earlier ones; the first failing op decides, and within an op the checks go
// in the contract's order: holder exists, holder not suspended, hold (exists,
// not expired), coupon (exists, not expired, available), amount (funds,
// points, hold remaining), overflow.
func (m *modelHolder) eval(n mInstr, now int64) (mOutcome, *mAccounts) {
	var a *mAccounts
	if m.acc != nil {
		a = m.acc.clone()
	}
	legs, coupons, holds := map[string]bool{}, map[string]bool{}, map[string]bool{} // the accounts touched
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	fail := func(i int, code instructions.Code) (mOutcome, *mAccounts) {
		return mOutcome{code: code, op: i, notes: notes}, nil
	}
	for i, op := range n.ops {
		if op.op == "open" {
			if a != nil {
				return fail(i, instructions.CodeHolderExists)
			}
			a = newAccounts()
			continue
		}
		if a == nil {
			return fail(i, instructions.CodeHolderNotFound)
		}
		if mTakesValueOut[op.op] && a.status == mSuspended {
			return fail(i, instructions.CodeHolderSuspended)
		}
		if a.status == mSuspended {
			note("suspended holder: " + op.op)
		}
		if (op.op == "freeze" || op.op == "freeze_points" || op.op == "lock_coupon") && a.holds[op.hold] == nil && holds[op.hold] {
			note("hold closed and created again in one instruction")
		}
		switch op.op {
		case "credit", "earn_points":
			leg := op.asset
			if op.op == "earn_points" {
				leg = mPoints
			}
			av, fr := a.get(leg)
			if av+op.units > mMaxUnits {
				note("overflow: " + op.op)
				return fail(i, instructions.CodeOverflow)
			}
			if av+op.units == mMaxUnits {
				note("2^53-1 reached")
			}
			a.set(leg, av+op.units, fr)
			legs[leg] = true

		case "debit", "spend_points":
			leg, short := op.asset, instructions.CodeInsufficientFunds
			if op.op == "spend_points" {
				leg, short = mPoints, instructions.CodeInsufficientPoints
			}
			av, fr := a.get(leg)
			if av < op.units {
				return fail(i, short)
			}
			a.set(leg, av-op.units, fr)
			legs[leg] = true

		case "freeze", "freeze_points":
			h, code := a.holdFor(op, now, note)
			if code != "" {
				return fail(i, code)
			}
			leg, short := op.asset, instructions.CodeInsufficientFunds
			if op.op == "freeze_points" {
				leg, short = mPoints, instructions.CodeInsufficientPoints
			}
			av, fr := a.get(leg)
			if av < op.units {
				return fail(i, short)
			}
			if fr+op.units > mMaxUnits { // a leg is part of frozen: frozen bounds it
				note("overflow: frozen")
				return fail(i, instructions.CodeOverflow)
			}
			a.set(leg, av-op.units, fr+op.units)
			h.legs[leg] += op.units
			legs[leg], holds[op.hold] = true, true

		case "lock_coupon":
			h, code := a.holdFor(op, now, note)
			if code != "" {
				return fail(i, code)
			}
			c := a.coupons[op.coupon]
			switch {
			case c == nil:
				return fail(i, instructions.CodeCouponNotFound)
			case expired(c.expires, now):
				return fail(i, instructions.CodeCouponExpired)
			case c.state != mAvailable:
				return fail(i, instructions.CodeCouponUnavailable)
			}
			c.state = mHeldBy + op.hold
			h.coupons = append(h.coupons, op.coupon)
			coupons[op.coupon], holds[op.hold] = true, true

		case "settle", "release":
			h := a.holds[op.hold]
			if h == nil {
				return fail(i, instructions.CodeHoldNotFound)
			}
			settle := op.op == "settle"
			if settle && expired(h.expires, now) { // release is allowed after expiry
				return fail(i, instructions.CodeHoldExpired)
			}
			if expired(h.expires, now) {
				note("release of an expired hold")
			}
			if len(h.legs) > 1 || len(h.legs) == 1 && len(h.coupons) > 0 {
				note(op.op + " of a multi-leg hold")
			}
			take := maps.Clone(h.legs)
			if op.asset != "" {
				left, ok := h.legs[op.asset]
				amount := op.units
				if amount == 0 {
					amount = left
				}
				if !ok || amount > left {
					return fail(i, instructions.CodeExceedsHold)
				}
				take = map[string]int64{op.asset: amount}
			}
			for leg, u := range take {
				av, fr := a.get(leg)
				if !settle && av+u > mMaxUnits {
					note("overflow: release")
					return fail(i, instructions.CodeOverflow)
				}
				if settle {
					a.set(leg, av, fr-u) // leaves to the counterparty
				} else {
					a.set(leg, av+u, fr-u)
				}
				if h.legs[leg] -= u; h.legs[leg] == 0 {
					delete(h.legs, leg)
				}
				legs[leg] = true
			}
			if op.asset == "" {
				// Coupons settle with the whole hold only: a leg is an asset or
				// points. Contract silent on a held coupon that expired before
				// its hold is settled: the coupon was valid when it was locked and
				// the hold has not expired, so the capture goes through (as a card
				// authorisation is honoured until it expires).
				for _, id := range h.coupons {
					if expired(a.coupons[id].expires, now) {
						note(op.op + " of a hold with an expired coupon")
					}
					if settle {
						a.coupons[id].state = mUsed
					} else {
						a.coupons[id].state = mAvailable // an expired one stays unusable all the same
					}
					coupons[id] = true
				}
				h.coupons = nil
			}
			if len(h.legs) == 0 && len(h.coupons) == 0 {
				delete(a.holds, op.hold) // a hold closes when nothing is left in it
			} else if len(h.legs) == 0 {
				note("hold left with coupons only")
			}
			holds[op.hold] = true

		case "grant_coupon":
			if a.coupons[op.coupon] != nil {
				return fail(i, instructions.CodeCouponExists)
			}
			a.coupons[op.coupon] = &mCoupon{state: mAvailable, expires: op.expires}
			coupons[op.coupon] = true

		case "redeem_coupon":
			c := a.coupons[op.coupon]
			switch {
			case c == nil:
				return fail(i, instructions.CodeCouponNotFound)
			case expired(c.expires, now):
				return fail(i, instructions.CodeCouponExpired)
			case c.state != mAvailable:
				return fail(i, instructions.CodeCouponUnavailable)
			}
			c.state = mUsed
			coupons[op.coupon] = true

		case "suspend":
			a.status = mSuspended
		case "resume":
			a.status = mActive
		}
	}
	a.seq++

	// The result: the state after the instruction of every account it touched.
	res := instructions.Result{ID: n.id, Holder: n.holder, Seq: a.seq,
		Balances: map[string]instructions.Balance{}, Coupons: map[string]string{}, Holds: map[string]instructions.Hold{}}
	for leg := range legs {
		av, fr := a.get(leg)
		if leg == mPoints {
			res.Points = &instructions.Points{Available: mFormat(av, leg), Frozen: mFormat(fr, leg)}
		} else {
			res.Balances[leg] = instructions.Balance{Available: mFormat(av, leg), Frozen: mFormat(fr, leg)}
		}
	}
	for id := range coupons {
		res.Coupons[id] = a.coupons[id].state
	}
	out := mOutcome{res: res, notes: notes, pending: map[string]int64{}}
	for id := range holds {
		if h := a.holds[id]; h != nil {
			res.Holds[id] = h.view()
			if h.born && h.ttl > 0 {
				out.pending[id] = h.ttl
			}
		}
	}
	return out, a
}

func (h *mHold) view() instructions.Hold {
	v := instructions.Hold{Legs: map[string]string{}, Coupons: slices.Clone(h.coupons), ExpiresMs: h.expires}
	for leg, u := range h.legs {
		v.Legs[leg] = mFormat(u, leg)
	}
	return v
}

// commit makes an evaluated outcome the model's state. A rejection records
// only itself, and only for a holder that existed: "nothing is ever written
// for an unknown holder".
func (m *modelHolder) commit(n mInstr, out mOutcome, acc *mAccounts) {
	out.pending = nil
	if out.code == "" {
		for _, h := range acc.holds {
			h.born, h.ttl = false, 0
		}
		m.acc = acc
	} else if m.acc == nil {
		return
	}
	m.tx[n.id] = mRecord{body: n.body(), out: out}
}

// state is what engine.State must answer; ok is false for a holder that does
// not exist.
func (m *modelHolder) state(holder string) (st instructions.State, ok bool) {
	a := m.acc
	if a == nil {
		return st, false
	}
	st = instructions.State{Holder: holder, Status: a.status, Seq: a.seq,
		Balances: map[string]instructions.Balance{},
		Points:   instructions.Points{Available: mFormat(a.pAvail, mPoints), Frozen: mFormat(a.pFrozen, mPoints)},
		Coupons:  map[string]string{}, Holds: map[string]instructions.Hold{}}
	for _, m := range []map[string]int64{a.avail, a.frozen} {
		for asset := range m {
			st.Balances[asset] = instructions.Balance{Available: mFormat(a.avail[asset], asset), Frozen: mFormat(a.frozen[asset], asset)}
		}
	}
	for id, c := range a.coupons {
		st.Coupons[id] = c.state
	}
	for id, h := range a.holds {
		st.Holds[id] = h.view()
	}
	return st, true
}
