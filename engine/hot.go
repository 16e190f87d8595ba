package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// Hot holders (docs/hot-holders.md): a holder of N lanes keeps its spending
// state in lane 0, the holder itself, and receives in lanes 1..N-1, holders
// named X#1 ... in other slots. A credit-only instruction, or a transfer's
// credit part, goes to the lane jump(hash(id), N); everything else goes to
// lane 0 whole.
//
// Every lane stores the count (field lanes), and the engine's door of the
// library refuses a credit routed with another count (LANES_CHANGED): an
// engine that routed by a count it cached learns of a raise from the first
// lane that refuses it. A raise reaches the lanes before lane 0 (raiseLanes),
// and engines learn counts only from lane 0, so no engine routes by a new
// count before every lane refuses the old one. An id applied before a raise
// and sent again after it is found in the lane its count then gave it: lane 0
// keeps the counts of the raises still inside the idempotency window
// (lanes_hist), and the engine looks for the id's record there first.

// laneCacheTTL is how long a transfer trusts a holder's count read for its
// payees (a plain instruction needs no freshness: the lane it reaches checks).
const laneCacheTTL = 30 * time.Second

// lanes is what lane 0 says of a holder's lanes.
type lanes struct {
	count int       // 1 for a plain holder
	eras  []laneEra // earlier counts whose raise is inside the idempotency window
	read  time.Time
}

// laneEra is an earlier count and when (Redis ms) it ended.
type laneEra struct {
	count int
	endMs int64
}

// laneCache keeps what the engine knows of holders' lanes. Plain holders
// enter it only through a transfer's read of its payees.
type laneCache struct {
	mu sync.Mutex
	m  map[string]lanes
}

func (c *laneCache) get(holder string) (lanes, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.m[holder]
	return l, ok
}

func (c *laneCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *laneCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

// put keeps l unless the cache knows a higher count: counts only rise, and
// a read that answers late must not take a raise back.
func (c *laneCache) put(holder string, l lanes) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]lanes{}
	}
	if old, ok := c.m[holder]; !ok || old.count <= l.count {
		c.m[holder] = l
	}
}

// parseLanes reads lane 0's fields lanes and lanes_hist.
func parseLanes(count, hist string) lanes {
	l := lanes{count: 1, read: time.Now()}
	if n, err := strconv.Atoi(count); err == nil && n > 1 {
		l.count = n
	}
	for _, e := range strings.Split(hist, ";") {
		c, ms, ok := strings.Cut(e, "@")
		n, err1 := strconv.Atoi(c)
		end, err2 := strconv.ParseInt(ms, 10, 64)
		if ok && err1 == nil && err2 == nil {
			l.eras = append(l.eras, laneEra{count: n, endMs: end})
		}
	}
	return l
}

// readLanes reads holder's lanes from lane 0 and caches them.
func (e *Engine) readLanes(ctx context.Context, holder string) (lanes, error) {
	v, err := e.rdb.HMGet(ctx, cluster.Holder(holder), stored.FieldLanes, stored.FieldLanesHist).Result()
	if err != nil {
		return lanes{}, redisFailure("", err)
	}
	return e.learnLanes(ctx, holder, v), nil
}

// learnLanes caches what lane 0 answered to HMGET lanes lanes_hist (v).
// A holder this engine learns is hot goes into the hot holders' set again:
// the set lives on one master, and one that lost its data would leave the
// sweep blind to every hot holder until each is touched.
func (e *Engine) learnLanes(ctx context.Context, holder string, v []any) lanes {
	s0, _ := v[0].(string)
	s1, _ := v[1].(string)
	l := parseLanes(s0, s1)
	if was, _ := e.lanes.get(holder); l.count > 1 && was.count < 2 {
		_ = e.rdb.SAdd(ctx, cluster.HotHolders(), holder).Err() // the sweep's list; the next learner tries again
	}
	e.lanes.put(holder, l)
	return l
}

// laneOf is the lane of an instruction (or transfer) id among count lanes:
// jump consistent hashing (Lamping and Veach), so that a raise from n to m
// lanes moves an id only to one of the new lanes.
func laneOf(id string, count int) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	key := h.Sum64()
	b, j := int64(-1), int64(0)
	for j < int64(count) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}

// creditOnly tells whether every op of n only adds value: such an
// instruction to a hot holder goes to a lane picked by its id.
func creditOnly(n instructions.Normalized) bool {
	for _, s := range n.Steps {
		if s.Op != instructions.OpCredit && s.Op != instructions.OpEarnPoints {
			return false
		}
	}
	return true
}

// setsLanes tells whether n opens a hot holder or raises its lanes, and to how many.
// With several such ops, the last count, which lane 0 ends with if it takes
// the instruction; 0 when a later one would lower an earlier one, which
// lane 0 refuses: no lane is raised for it.
func setsLanes(n instructions.Normalized) int {
	count := 0
	for _, s := range n.Steps {
		if (s.Op == instructions.OpOpen || s.Op == instructions.OpSetLanes) && s.Units > 1 {
			if int(s.Units) < count {
				return 0
			}
			count = int(s.Units)
		}
	}
	return count
}

// onLane gives c sent to lane of its holder, checked against count (0: not checked).
func (e *Engine) onLane(c call, lane, count int) call {
	if lane > 0 {
		n := c.n
		n.Holder = instructions.LaneHolder(n.Holder, lane)
		c = e.build(n)
	}
	return c.routed(count)
}

// routeCredit gives the call of a credit-only instruction: to the lane its
// id picks among the lanes the engine knows, or, for a holder it knows as
// plain, to the holder checked as plain. An id applied before a raise still
// inside the idempotency window goes where it went then, if its record is there.
func (e *Engine) routeCredit(ctx context.Context, c call) (call, error) {
	l, ok := e.lanes.get(c.n.Holder)
	if !ok || l.count < 2 {
		return e.onLane(c, 0, 1), nil
	}
	lane := laneOf(c.n.ID, l.count)
	var earlier []int
	now := time.Now().UnixMilli()
	for _, era := range l.eras {
		if old := laneOf(c.n.ID, era.count); old != lane && era.endMs+e.ttl.Milliseconds() > now {
			earlier = append(earlier, old)
		}
	}
	// While a raise was under way, lane 0 took the credits whose lane was
	// ahead of it (applyCredit): look there too.
	if len(l.eras) > 0 && lane != 0 && !slices.Contains(earlier, 0) {
		earlier = append(earlier, 0)
	}
	if len(earlier) > 0 {
		reqs := make([]req, len(earlier))
		for i, old := range earlier {
			k := cluster.Tx(instructions.LaneHolder(c.n.Holder, old), c.n.ID)
			reqs[i] = req{keys: []string{k}, args: []any{"exists", k}}
		}
		for i, got := range e.submit(ctx, reqs) {
			n, err := got.cmd.Int64()
			if err != nil {
				return call{}, redisFailure(c.n.ID, err)
			}
			if n == 1 {
				return e.onLane(c, earlier[i], 0), nil
			}
		}
	}
	return e.onLane(c, lane, l.count), nil
}

// applyCredit applies a credit-only instruction on the lane it belongs to.
// A lane that refuses the count it was routed by (the holder's lanes were
// raised, or it is hot and the engine did not know) sends it to lane 0 for
// the count. A lane ahead of lane 0 (raised, and lane 0's raise not yet
// there, or never: a raise that lane 0 refused) has it sent to lane 0,
// checked by lane 0's count: taken there, it ran before lane 0's raise, so
// before any engine routes by the new count, and those look in lane 0 for
// it (routeCredit); refused, lane 0 has been raised meanwhile and it is
// routed by the new count. Sent to its lane unchecked instead, it could
// land there after an engine routing by the new count had looked for it
// there and sent it to its new lane: applied twice.
//
// Each refusal is of a count lower than lane 0's by then, and counts only
// rise: the loop ends within MaxLanes raises. LANES_CHANGED is the engine's
// own and never reaches a caller: past that, the credit is UNAVAILABLE.
func (e *Engine) applyCredit(ctx context.Context, c call) Outcome {
	var o Outcome
	for range instructions.MaxLanes {
		rc, err := e.routeCredit(ctx, c)
		if err != nil {
			return Outcome{Err: err}
		}
		o = e.applyGrouped(ctx, rc)
		if !lanesChanged(o.Err) {
			return onHolder(o, rc, c.n.Holder)
		}
		// The count it was routed by: the cache may have moved meanwhile.
		routed, _ := strconv.Atoi(rc.args[argRoute].(string))
		l, err := e.readLanes(ctx, c.n.Holder)
		if err != nil {
			return Outcome{Err: err}
		}
		if l.count != routed {
			continue
		}
		if o = e.applyGrouped(ctx, e.onLane(c, 0, l.count)); !lanesChanged(o.Err) {
			return onHolder(o, c, c.n.Holder)
		}
		if _, err := e.readLanes(ctx, c.n.Holder); err != nil {
			return Outcome{Err: err}
		}
	}
	if lanesChanged(o.Err) {
		o.Err = &Error{ID: c.n.ID, Code: instructions.CodeUnavailable, OpIndex: instructions.NoOp,
			Message: fmt.Sprintf("the lanes of hot holder %s were raised %d times while this credit was routed: retry with the same id", c.n.Holder, instructions.MaxLanes)}
	}
	return onHolder(o, c, c.n.Holder)
}

func lanesChanged(err error) bool {
	var ierr *Error
	return errors.As(err, &ierr) && ierr.Code == instructions.CodeLanesChanged
}

// onHolder answers for the holder the outcome of sent, a call to one of its
// lanes: its holder, and which lane. A receiving lane not found has been
// lost (its master lost its data), not the holder: UNAVAILABLE, naming it.
func onHolder(o Outcome, sent call, holder string) Outcome {
	var ierr *Error
	_, lane := instructions.ParentOf(sent.n.Holder)
	switch {
	case o.Err == nil && o.Result.Holder != holder:
		o.Result.Holder, o.Result.Lane = holder, lane
	case lane > 0 && errors.As(o.Err, &ierr) && ierr.Code == instructions.CodeHolderNotFound:
		o.Err = &Error{ID: ierr.ID, Code: instructions.CodeUnavailable, OpIndex: instructions.NoOp,
			Message: fmt.Sprintf("lane %d of hot holder %s (%s) is missing: rebuild it from the ledger (engined rebuild)", lane, holder, sent.n.Holder)}
	}
	return o
}

// laneStepID begins the ids of the instructions that open and raise lanes:
// under the transfers' prefix, which no client's instruction may take, so
// that no credit of a client sits under the id a raise needs.
const laneStepID = instructions.TransferHoldPrefix + "lanes-"

// raiseLanes makes lanes 1..count-1 of holder exist with count, before lane
// 0 says so; has is lane 0's count now. The lanes below has exist: they are
// raised, and one found missing fails the raise (UNAVAILABLE, naming it):
// opened anew, a lane lost with its master's data would come back empty, its
// money gone from every read and its seqs given twice to the ledger. The
// others are opened, or raised when they exist already (left ahead by a
// raise lane 0 refused). Ids "x:lanes-open-<count>" and
// "x:lanes-set_lanes-<count>", so that a retry replays. The holder joins the
// hot holders' set, which the sweep reads.
func (e *Engine) raiseLanes(ctx context.Context, holder string, has, count int) error {
	if err := e.rdb.SAdd(ctx, cluster.HotHolders(), holder).Err(); err != nil {
		return redisFailure("", err)
	}
	// The engine's own steps, on names no client can give: built here
	// rather than validated as a client's instruction.
	step := func(lane int, op string) call {
		return e.build(instructions.Normalized{ID: laneStepID + op + "-" + strconv.Itoa(count),
			Holder: instructions.LaneHolder(holder, lane), Counterparty: instructions.DefaultCounterparty,
			Steps: []instructions.Step{{Op: op, Units: int64(count)}}})
	}
	calls := make([]call, count-1)
	var open, raise []int
	for i := range calls {
		if i+1 < has {
			calls[i], raise = step(i+1, instructions.OpSetLanes), append(raise, i)
		} else {
			calls[i], open = step(i+1, instructions.OpOpen), append(open, i)
		}
	}
	out := make([]Outcome, len(calls))
	e.run(ctx, calls, open, out)
	for _, i := range open {
		var ierr *Error
		switch o := out[i]; {
		case o.Err == nil:
		case errors.As(o.Err, &ierr) && ierr.Code == instructions.CodeHolderExists:
			raise = append(raise, i)
			calls[i] = step(i+1, instructions.OpSetLanes)
		default:
			return o.Err
		}
	}
	e.run(ctx, calls, raise, out)
	for _, i := range raise {
		// A lane already past count (left ahead by a raise lane 0 refused)
		// refuses to be lowered: it stays ahead, which routing allows.
		if err := out[i].Err; err != nil && !errors.Is(err, instructions.CodeInvalidInstruction) {
			return onHolder(out[i], calls[i], holder).Err
		}
	}
	return nil
}

// raisesWhen tells whether lane 0, of status, gets to its set_lanes ops
// as far as suspension goes: a suspended holder refuses them, unless the
// instruction resumes it first.
func raisesWhen(status string, steps []instructions.Step) bool {
	for _, s := range steps {
		switch s.Op {
		case instructions.OpResume:
			status = instructions.StatusActive
		case instructions.OpSuspend:
			status = instructions.StatusSuspended
		case instructions.OpSetLanes:
			if status == instructions.StatusSuspended {
				return false
			}
		}
	}
	return true
}

func indexes(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// applyLanes applies an instruction that opens a hot holder or raises its
// lanes: its lanes first, then the instruction on lane 0.
//
// The lanes are left as they are when lane 0 will refuse the instruction
// or has nothing to raise (an open of a holder that exists, a set_lanes of
// a holder missing or at count already, or suspended and not resumed by the
// instruction first: lane 0 then answers its error, or its replay).
// Otherwise they are raised even when lane 0 may refuse another op of the
// instruction (a debit it cannot cover), which leaves the lanes ahead of
// lane 0 and the holder's money as it was: lanes ahead are safe
// (applyCredit); lanes behind are not, as two engines could then route one
// credit by two counts to two lanes that both take it.
func (e *Engine) applyLanes(ctx context.Context, c call, count int) Outcome {
	v, err := e.rdb.HMGet(ctx, cluster.Holder(c.n.Holder), stored.FieldStatus, stored.FieldLanes).Result()
	if err != nil {
		return Outcome{Err: redisFailure(c.n.ID, err)}
	}
	status, _ := v[0].(string)
	now, _ := v[1].(string)
	has, _ := strconv.Atoi(now)
	opens := c.n.Steps[0].Op == instructions.OpOpen
	if opens && status == "" || !opens && status != "" && has < count && raisesWhen(status, c.n.Steps) {
		if err := e.raiseLanes(ctx, c.n.Holder, has, count); err != nil {
			return Outcome{Err: err}
		}
	}
	o := e.applyGrouped(ctx, c)
	switch {
	case o.Err == nil:
		_, _ = e.readLanes(ctx, c.n.Holder)
	case opens && status == "" && known(o) && !errors.Is(o.Err, instructions.CodeHolderExists):
		e.unlist(ctx, c.n.Holder)
	}
	return o
}

// unlist takes holder out of the hot holders' set once lane 0 refused the
// instruction that opens it: the holder does not exist, and the sweep would
// fail on it every pass. An open of the same holder that applied meanwhile
// (lane 0 exists) puts it back.
func (e *Engine) unlist(ctx context.Context, holder string) {
	if e.rdb.SRem(ctx, cluster.HotHolders(), holder).Err() != nil {
		return
	}
	if n, err := e.rdb.Exists(ctx, cluster.Holder(holder)).Result(); err != nil || n > 0 {
		_ = e.rdb.SAdd(ctx, cluster.HotHolders(), holder).Err()
	}
}

// waitingNote adds to an INSUFFICIENT_FUNDS or INSUFFICIENT_POINTS of a hot
// holder's lane 0 how much of it waits in the receiving lanes.
func (e *Engine) waitingNote(ctx context.Context, c call, o Outcome) Outcome {
	var ierr *Error
	if !errors.As(o.Err, &ierr) || (ierr.Code != instructions.CodeInsufficientFunds && ierr.Code != instructions.CodeInsufficientPoints) ||
		ierr.OpIndex < 0 || ierr.OpIndex >= len(c.n.Steps) {
		return o
	}
	l, err := e.readLanes(ctx, c.n.Holder)
	if err != nil || l.count < 2 {
		return o
	}
	field, asset := stored.FieldPointsAvailable, ""
	if ierr.Code == instructions.CodeInsufficientFunds {
		asset = c.n.Steps[ierr.OpIndex].Asset
		field = stored.PrefixBalance + asset
	}
	reqs := make([]req, l.count-1)
	for i := range reqs {
		k := cluster.Holder(instructions.LaneHolder(c.n.Holder, i+1))
		reqs[i] = req{keys: []string{k}, args: []any{"hget", k, field}}
	}
	var sum int64
	for _, got := range e.submit(ctx, reqs) {
		v, _ := got.cmd.Text()
		n, _ := strconv.ParseInt(v, 10, 64)
		sum += n
	}
	what := "points"
	if asset != "" {
		what = e.amount(asset, strconv.FormatInt(sum, 10)) + " " + asset
	} else {
		what = strconv.FormatInt(sum, 10) + " points"
	}
	cp := *ierr
	cp.Message += "; " + what + " more waits in the holder's " + strconv.Itoa(l.count-1) + " receiving lanes until the next sweep moves it to lane 0"
	return Outcome{Err: &cp}
}
