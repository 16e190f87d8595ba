package bench

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

// seedDeduct is the seed article's deduct script as a function, so that
// both sides are measured as FCALL: one key, GET, check that it exists,
// that the amount is positive and that the balance covers it, then DECRBY.
const seedDeduct = `#!lua name=atomledger_bench_seed
redis.register_function('seed_deduct', function(KEYS, ARGV)
  local v = redis.call('GET', KEYS[1])
  if not v then return -1 end
  local amount = tonumber(ARGV[1])
  if amount == nil or amount <= 0 then return -2 end
  if tonumber(v) < amount then return -3 end
  return redis.call('DECRBY', KEYS[1], amount)
end)
`

const seedFn = "seed_deduct"

// floorDebit is the least any function can do for a 1-op debit under the
// contract, written for that one case: the same keys and arguments as the
// library's apply, the same calls (GET of the record, TIME, HMGET, XADD of
// the event with its fields and chained digest, HSET, SET of the record),
// and no generality: no op table, no checks but the balance's, the event
// and result JSON written for a debit. The library's debit against it is
// what the library's own work costs above the calls the design makes.
const floorDebit = `#!lua name=atomledger_bench_floor
redis.register_function('floor_debit', function(keys, argv)
  local holder, id, fp, ttl, cp, memo, a, amt = argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], argv[10], argv[11]
  local rec = redis.call('GET', keys[2])
  if rec then return {1, rec} end
  local t = redis.call('TIME')
  local ts = t[1] .. string.sub(string.format('%06d', t[2]), 1, 3)
  local fb = 'b:' .. a
  local raw = redis.call('HMGET', keys[1], 'status', 'seq', 'digest', fb, 'f:' .. a)
  local n, b = tonumber(amt), tonumber(raw[4] or '0')
  if not raw[1] or b < n then return {0, 'err'} end
  local bs, fs = string.format('%d', b - n), raw[5] or '0'
  local seq = string.format('%d', tonumber(raw[2]) + 1)
  local ops = '[{"op":"debit","asset":"' .. a .. '","units":"' .. amt .. '","mv":[["' .. a .. '","avail","cp","' .. amt .. '"]]}]'
  local result = '{"s":"' .. seq .. '","st":"' .. raw[1] .. '","b":{"' .. a .. '":["' .. bs .. '","' .. fs .. '"]},"c":{},"h":{}}'
  local prev = raw[3] or ''
  local digest = redis.sha1hex(#prev .. ':' .. prev .. #holder .. ':' .. holder .. #seq .. ':' .. seq .. #id .. ':' .. id ..
    #fp .. ':' .. fp .. #ts .. ':' .. ts .. #cp .. ':' .. cp .. #ops .. ':' .. ops .. #result .. ':' .. result ..
    #memo .. ':' .. memo .. '0:')
  redis.call('XADD', keys[3], '*', 'holder', holder, 'seq', seq, 'id', id, 'fp', fp, 'ts', ts, 'cp', cp,
    'ops', ops, 'state', result, 'digest', digest, 'memo', memo, 'dv', '2')
  redis.call('HSET', keys[1], 'seq', seq, fb, bs, 'digest', digest)
  redis.call('SET', keys[2], string.sub(fp, 1, 16) .. seq .. ' b' .. a .. '/' .. bs .. '/' .. fs, 'PX', ttl)
  return {0, 'ok\n' .. result}
end)
`

const floorFn = "floor_debit"

// floorCheckout is the same for the checkout (fixtures.go checkout: debit,
// spend points, redeem a coupon, freeze under a new hold with a TTL): the
// library's calls for it (GET, TIME, HMGET, the expiry index's type check,
// XADD, ZADD, HSET, SET) and its checks, written for that one instruction.
const floorCheckout = `#!lua name=atomledger_bench_floor_checkout
redis.register_function('floor_checkout', function(keys, argv)
  local holder, id, fp, ttl, cp, memo = argv[1], argv[2], argv[3], argv[4], argv[5], argv[6]
  local a1, n1, n2, c = argv[10], argv[11], argv[17], argv[25]
  local a4, n4, h, ms = argv[28], argv[29], argv[30], argv[32]
  local rec = redis.call('GET', keys[2])
  if rec then return {1, rec} end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local ts = string.format('%d', now)
  local raw = redis.call('HMGET', keys[1], 'status', 'seq', 'digest', 'b:' .. a1, 'p:a', 'p:f', 'c:' .. c, 'h:' .. h,
    'b:' .. a4, 'f:' .. a4)
  if not raw[1] or raw[8] then return {0, 'err'} end
  local b1, pa, b4, f4 = tonumber(raw[4] or '0'), tonumber(raw[5] or '0'), tonumber(raw[9] or '0'), tonumber(raw[10] or '0')
  local d1, d2, d4 = tonumber(n1), tonumber(n2), tonumber(n4)
  local cs = raw[7]
  if b1 < d1 or pa < d2 or b4 < d4 or not cs or string.sub(cs, 1, 9) ~= 'available' then return {0, 'err'} end
  local cexp = string.match(cs, '|(%d+)$')
  if cexp and now >= tonumber(cexp) then return {0, 'err'} end
  local exp = now + tonumber(ms)
  local s1, s2, s4, sf4 = string.format('%d', b1 - d1), string.format('%d', pa - d2), string.format('%d', b4 - d4), string.format('%d', f4 + d4)
  local pf = raw[6] or '0'
  local cnew = cexp and ('used|' .. cexp) or 'used'
  local hold = string.format('%d', exp) .. '|' .. a4 .. '=' .. n4 .. '|'
  local seq = string.format('%d', tonumber(raw[2]) + 1)
  local ops = '[{"op":"debit","asset":"' .. a1 .. '","units":"' .. n1 .. '","mv":[["' .. a1 .. '","avail","cp","' .. n1 ..
    '"]]},{"op":"spend_points","units":"' .. n2 .. '","mv":[["points","avail","cp","' .. n2 .. '"]]},{"op":"redeem_coupon","coupon":"' ..
    c .. '"},{"op":"freeze","asset":"' .. a4 .. '","units":"' .. n4 .. '","hold":"' .. h .. '","ms":"' .. ms ..
    '","mv":[["' .. a4 .. '","avail","frozen","' .. n4 .. '"]]}]'
  local result = '{"s":"' .. seq .. '","st":"' .. raw[1] .. '","b":{"' .. a1 .. '":["' .. s1 .. '","0"],"' .. a4 .. '":["' ..
    s4 .. '","' .. sf4 .. '"]},"c":{"' .. c .. '":"' .. cnew .. '"},"h":{"' .. h .. '":"' .. hold .. '"},"p":["' .. s2 .. '","' .. pf .. '"]}'
  local prev = raw[3] or ''
  local digest = redis.sha1hex(#prev .. ':' .. prev .. #holder .. ':' .. holder .. #seq .. ':' .. seq .. #id .. ':' .. id ..
    #fp .. ':' .. fp .. #ts .. ':' .. ts .. #cp .. ':' .. cp .. #ops .. ':' .. ops .. #result .. ':' .. result ..
    #memo .. ':' .. memo .. '0:')
  redis.call('ZCARD', keys[4])
  redis.call('XADD', keys[3], '*', 'holder', holder, 'seq', seq, 'id', id, 'fp', fp, 'ts', ts, 'cp', cp,
    'ops', ops, 'state', result, 'digest', digest, 'memo', memo, 'dv', '2')
  redis.call('ZADD', keys[4], exp, holder .. ' ' .. h)
  redis.call('HSET', keys[1], 'seq', seq, 'b:' .. a1, s1, 'p:a', s2, 'c:' .. c, cnew, 'h:' .. h, hold, 'b:' .. a4, s4,
    'f:' .. a4, sf4, 'digest', digest)
  redis.call('SET', keys[2], string.sub(fp, 1, 16) .. seq .. ' b' .. a1 .. '/' .. s1 .. '/0 b' .. a4 .. '/' .. s4 .. '/' .. sf4 ..
    ' c' .. c .. '/' .. cnew .. ' h' .. h .. '/' .. hold .. ' p' .. s2 .. '/' .. pf, 'PX', ttl)
  return {0, 'ok\n' .. result}
end)
`

const floorCheckoutFn = "floor_checkout"

// scriptCost runs the script_cost part: Rounds checkout phases, Rounds
// phases of the same checkout through the JSON door, Rounds 1-op debit
// phases and Rounds deduct phases, alternated, each on fresh keys
// and measured alone between a CONFIG RESETSTAT and an INFO commandstats,
// so that the functions' FCALL figures never mix. Then, with
// Settings.Breakdown, the variants.
type scriptCost struct {
	e     *env
	phase int            // counter that keeps each phase's keys apart
	keep  func(int) bool // the slots of the one master measured
}

func runScriptCost(ctx context.Context, e *env) (ScriptCost, error) {
	const part = "script_cost"
	sc := &scriptCost{e: e}
	var err error
	if sc.keep, err = e.oneMaster(ctx); err != nil {
		return ScriptCost{}, err
	}
	for _, lib := range []string{seedDeduct, floorDebit, floorCheckout} {
		if err = e.loadLibrary(ctx, lib); err != nil {
			return ScriptCost{}, err
		}
	}
	var stages []variant
	if e.s.Breakdown {
		if stages, err = breakdownVariants(ctx, e); err != nil {
			return ScriptCost{}, err
		}
	}
	total := 6*e.s.Rounds + e.s.BreakdownRnd*len(stages)
	done := 0

	var seeds, checkouts, debits, floors, floorCheckouts, jsons []float64
	perCmd := map[string][]CommandCost{}
	for r := range e.s.Rounds {
		// Alternate which kind goes first, so that a drift of the machine
		// weighs on both alike.
		kinds := []string{"checkout", "floor_checkout", "json", "debit", "floor", "deduct"}
		if r%2 == 1 {
			slices.Reverse(kinds)
		}
		for _, k := range kinds {
			switch k {
			case "checkout":
				usec, stats, err := sc.checkoutPhase(ctx, lua.FuncApply, true, e.s.Calls)
				if err != nil {
					return ScriptCost{}, err
				}
				checkouts = append(checkouts, usec)
				for name, c := range commandsPerCall(stats, e.s.Calls) {
					perCmd[name] = append(perCmd[name], c)
				}
			case "floor_checkout":
				usec, _, err := sc.checkoutPhase(ctx, floorCheckoutFn, true, e.s.Calls)
				if err != nil {
					return ScriptCost{}, err
				}
				floorCheckouts = append(floorCheckouts, usec)
			case "json":
				usec, err := sc.jsonPhase(ctx)
				if err != nil {
					return ScriptCost{}, err
				}
				jsons = append(jsons, usec)
			case "debit", "floor":
				fn := map[string]string{"debit": lua.FuncApply, "floor": floorFn}[k]
				usec, err := sc.debitPhase(ctx, fn)
				if err != nil {
					return ScriptCost{}, err
				}
				if k == "debit" {
					debits = append(debits, usec)
				} else {
					floors = append(floors, usec)
				}
			default:
				usec, err := sc.deductPhase(ctx)
				if err != nil {
					return ScriptCost{}, err
				}
				seeds = append(seeds, usec)
			}
			done++
			e.step(part, done, total, k)
		}
	}
	out := ScriptCost{Rounds: e.s.Rounds, CallsPerPhase: e.s.Calls}
	out.SeedDeductUsec = round(median(seeds))
	out.CheckoutUsec = round(median(checkouts))
	out.Ratio = round(ratio(median(checkouts), median(seeds)))
	out.DebitUsec = round(median(debits))
	out.DebitRatio = round(ratio(median(debits), median(seeds)))
	out.FloorDebitUsec = round(median(floors))
	out.FloorRatio = round(ratio(median(floors), median(seeds)))
	out.DebitOverFloor = round(ratio(median(debits), median(floors)))
	out.FloorCheckoutUsec = round(median(floorCheckouts))
	out.FloorCheckoutRatio = round(ratio(median(floorCheckouts), median(seeds)))
	out.CheckoutOverFloor = round(ratio(median(checkouts), median(floorCheckouts)))
	out.JSONUsec = round(median(jsons))
	out.JSONRatio = round(ratio(median(jsons), median(seeds)))
	out.JSONOverFlat = round(ratio(median(jsons), median(checkouts)))
	for _, v := range jsons {
		out.JSONPhases = append(out.JSONPhases, round(v))
	}
	for _, v := range debits {
		out.DebitPhases = append(out.DebitPhases, round(v))
	}
	for _, v := range floors {
		out.FloorPhases = append(out.FloorPhases, round(v))
	}
	for _, v := range seeds {
		out.SeedPhases = append(out.SeedPhases, round(v))
	}
	for _, v := range checkouts {
		out.CheckoutPhase = append(out.CheckoutPhase, round(v))
	}
	var inCmds float64
	for name, cs := range perCmd {
		calls, usec := make([]float64, len(cs)), make([]float64, len(cs))
		for i, c := range cs {
			calls[i], usec[i] = c.Calls, c.Usec
		}
		inCmds += median(usec)
		out.Commands = append(out.Commands, CommandCost{Command: name, Calls: round(median(calls)), Usec: round(median(usec))})
	}
	sort.Slice(out.Commands, func(i, j int) bool { return out.Commands[i].Usec > out.Commands[j].Usec })
	out.InCommandsUsec = round(inCmds)

	if len(stages) > 0 {
		cum := make([][]float64, len(stages))
		for r := range e.s.BreakdownRnd {
			order := make([]int, len(stages))
			for i := range order {
				order[i] = i
			}
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, i := range order {
				usec, _, err := sc.checkoutPhase(ctx, stages[i].fn, stages[i].full, e.s.BreakdownCalls)
				if err != nil {
					return ScriptCost{}, fmt.Errorf("breakdown %q: %w", stages[i].name, err)
				}
				cum[i] = append(cum[i], usec)
				done++
				e.step(part, done, total, "breakdown: "+stages[i].name)
			}
		}
		// A stage's cost is the median over the rounds of its difference
		// with the stage before it in the same round: a drift of the
		// machine from one round to the next cancels out.
		prev := -1
		for i, v := range stages {
			if v.probe {
				d := make([]float64, len(cum[i]))
				for r := range d {
					d[r] = (cum[i][r] - cum[0][r]) / callProbeN
				}
				out.RedisCallUsec = round(median(d))
				continue
			}
			d := make([]float64, len(cum[i]))
			for r := range d {
				d[r] = cum[i][r]
				if prev >= 0 {
					d[r] -= cum[prev][r]
				}
			}
			out.Breakdown = append(out.Breakdown, Stage{Stage: v.name, CumulativeUsec: round(median(cum[i])), StageUsec: round(median(d))})
			prev = i
		}
	}
	return out, nil
}

// checkoutPhase opens calls fresh holders (outside the measure), then runs
// one checkout on each through the function fn, and returns the server's
// usec per FCALL and the phase's command statistics. With check, every
// reply must be an applied instruction.
func (sc *scriptCost) checkoutPhase(ctx context.Context, fn string, check bool, calls int) (float64, map[string]cmdStat, error) {
	e := sc.e
	sc.phase++
	holders := e.holderIDsWhere("co"+strconv.Itoa(sc.phase), calls, sc.keep)
	keys, args, err := e.prepare(ctx, holders, openRich, checkout)
	if err != nil {
		return 0, nil, err
	}
	if err := e.resetStats(ctx); err != nil {
		return 0, nil, err
	}
	verify := func(v any) error { return nil }
	if check {
		verify = appliedReply
	}
	if err := e.pipeCall(ctx, fn, keys, args, verify); err != nil {
		return 0, nil, err
	}
	return phaseUsec(ctx, e, len(keys))
}

// debitPhase opens Calls fresh holders (outside the measure), then runs one
// 1-op debit, with its idempotency record and event, on each through the
// function fn: the library's apply, or floorDebit.
func (sc *scriptCost) debitPhase(ctx context.Context, fn string) (float64, error) {
	e := sc.e
	sc.phase++
	holders := e.holderIDsWhere("db"+strconv.Itoa(sc.phase), e.s.Calls, sc.keep)
	keys, args, err := e.prepare(ctx, holders, openRich, oneDebit)
	if err != nil {
		return 0, err
	}
	if err := e.resetStats(ctx); err != nil {
		return 0, err
	}
	if err := e.pipeCall(ctx, fn, keys, args, appliedReply); err != nil {
		return 0, err
	}
	usec, _, err := phaseUsec(ctx, e, len(keys))
	return usec, err
}

// jsonPhase opens Calls fresh holders (outside the measure), then runs the
// checkout on each through the JSON door: the same instruction, in minor
// units, as one JSON argument.
func (sc *scriptCost) jsonPhase(ctx context.Context) (float64, error) {
	e := sc.e
	sc.phase++
	holders := e.holderIDsWhere("js"+strconv.Itoa(sc.phase), e.s.Calls, sc.keep)
	keys, _, err := e.prepare(ctx, holders, openRich, checkout)
	if err != nil {
		return 0, err
	}
	args := make([][]any, len(holders))
	for i, h := range holders {
		args[i] = []any{checkoutJSON(h, i)}
	}
	if err := e.resetStats(ctx); err != nil {
		return 0, err
	}
	if err := e.pipeCall(ctx, lua.FuncApplyJSON, keys, args, appliedReply); err != nil {
		return 0, err
	}
	usec, _, err := phaseUsec(ctx, e, len(keys))
	return usec, err
}

// deductPhase sets Calls fresh balances (outside the measure), then runs
// the seed deduct script once on each.
func (sc *scriptCost) deductPhase(ctx context.Context) (float64, error) {
	e := sc.e
	sc.phase++
	n := e.s.Calls
	keys := make([][]string, n)
	args := make([][]any, n)
	pipe := e.rdb.Pipeline()
	for i, j := 0, 0; i < n; j++ {
		k := e.prefix + ":acct:" + strconv.Itoa(sc.phase) + ":" + strconv.Itoa(j)
		if !sc.keep(cluster.Slot(k)) {
			continue
		}
		keys[i], args[i] = []string{k}, []any{"100"}
		pipe.Set(ctx, k, "1000000", 0)
		i++
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	if err := e.resetStats(ctx); err != nil {
		return 0, err
	}
	err := e.pipeCall(ctx, seedFn, keys, args, func(v any) error {
		if n, ok := v.(int64); !ok || n < 0 {
			return fmt.Errorf("deduct script answered %v", v)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	usec, _, err := phaseUsec(ctx, e, n)
	return usec, err
}

// phaseUsec reads the phase's statistics: usec per FCALL, after checking
// that commandstats counted exactly the phase's calls.
func phaseUsec(ctx context.Context, e *env, calls int) (float64, map[string]cmdStat, error) {
	stats, err := e.commandStats(ctx)
	if err != nil {
		return 0, nil, err
	}
	st := stats["fcall"]
	if st.Calls != int64(calls) {
		return 0, nil, fmt.Errorf("commandstats counted %d fcall in a phase of %d (is something else using this Redis?)", st.Calls, calls)
	}
	return float64(st.Usec) / float64(st.Calls), stats, nil
}

// commandsPerCall gives, per command the scripts called at least once every
// other run, its calls and usec per script run.
func commandsPerCall(stats map[string]cmdStat, calls int) map[string]CommandCost {
	out := map[string]CommandCost{}
	for name, st := range stats {
		if name == "fcall" || st.Calls*2 < int64(calls) {
			continue
		}
		out[strings.ToUpper(name)] = CommandCost{Calls: float64(st.Calls) / float64(calls), Usec: float64(st.Usec) / float64(calls)}
	}
	return out
}

// appliedReply checks a reply of the apply function: {0, "ok\n..."}.
func appliedReply(v any) error {
	r, ok := v.([]any)
	if !ok || len(r) != 2 {
		return fmt.Errorf("unexpected reply %v", v)
	}
	if s, _ := r[1].(string); !strings.HasPrefix(s, "ok\n") {
		return fmt.Errorf("instruction not applied: %q", s)
	}
	return nil
}

// prepare opens holders with setup (outside any measure) and encodes one
// instruction per holder, built by mk, for the apply function.
func (e *env) prepare(ctx context.Context, holders []string, setup func(string) instructions.Instruction, mk func(string, int) instructions.Instruction) ([][]string, [][]any, error) {
	ins := make([]instructions.Instruction, len(holders))
	for i, h := range holders {
		ins[i] = setup(h)
	}
	if err := e.applyAll(ctx, ins); err != nil {
		return nil, nil, err
	}
	keys := make([][]string, len(holders))
	args := make([][]any, len(holders))
	for i, h := range holders {
		var err error
		if keys[i], args[i], err = e.eng.Encode(mk(h, i)); err != nil {
			return nil, nil, err
		}
	}
	return keys, args, nil
}

// pipeCall runs FCALL fn with each keys[i], args[i], in pipelines of 100,
// and checks every reply.
func (e *env) pipeCall(ctx context.Context, fn string, keys [][]string, args [][]any, check func(any) error) error {
	const chunk = 100
	for lo := 0; lo < len(keys); lo += chunk {
		pipe := e.rdb.Pipeline()
		cmds := make([]*redis.Cmd, 0, chunk)
		for i := lo; i < min(lo+chunk, len(keys)); i++ {
			cmds = append(cmds, pipe.FCall(ctx, fn, keys[i], args[i]...))
		}
		_, _ = pipe.Exec(ctx)
		for _, c := range cmds {
			v, err := c.Result()
			if err != nil {
				return err
			}
			if err := check(v); err != nil {
				return err
			}
		}
	}
	return nil
}
