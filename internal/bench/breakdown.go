package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/atomledger/atomledger/lua"
)

// The breakdown runs truncated copies of the library's apply function: each
// returns just before one of the function's parts, so the difference
// between two neighbours is what that part costs. The copies are made here,
// from the embedded source, and loaded as libraries of their own (each
// function renamed, the transfer function left out: function names are
// global to a server); the library itself is never changed.

// cut is where a variant stops: before the first line that starts with
// marker, inside the apply function.
type cut struct {
	name   string // the part this stage adds to the previous one
	marker string // "" for the whole function
}

var cuts = []cut{
	{"FCALL, 4 keys and the op arguments, empty function", "\x00empty"},
	{"idempotency GET", "  local nargs = #argv"},
	{"argument checks, TIME, field list, one HMGET", "  status = raw[1] or nil"},
	{"op loop: checks, event ops JSON", "  -- Every check passed."},
	{"result JSON and the write lists", "  local result = concat(RB, '', 1, rn)"},
	{"digest (sha1hex of the event)", "  -- The expiry index is written only here"},
	{"expiry index type check, XADD of the event", "  if zadd then call(unpk(zadd)) end"},
	{"ZADD, HSET, SET of the idempotency record, HDEL, reply", ""},
}

// applyHead is the line that opens the apply function.
const applyHead = "local function apply(keys, argv, keep_result)\n"

// callProbe is a library whose function only makes callProbeN cheap
// redis.calls: what it costs over the empty variant, divided by
// callProbeN, is the price of one redis.call from Lua, whatever the command
// does.
const callProbeN = 20

var callProbe = "#!lua name=atomledger_bench_probe\nredis.register_function('bench_probe', function(keys)\n" +
	"  for i = 1, " + strconv.Itoa(callProbeN) + " do redis.call('HGET', keys[1], 'status') end\n" +
	"  return {0, ''}\nend)\n"

// variant is one loaded stage.
type variant struct {
	name  string
	fn    string // the function FCALL names
	full  bool   // the real function: its replies are checked
	probe bool   // callProbe, not a stage of the waterfall
}

// stopEarly is what a truncated variant runs instead of the rest.
const stopEarly = "  do return {0, ''} end\n"

// variantSource gives the source of the library whose function fn stops
// before c.marker.
func variantSource(src string, c cut, fn string) (string, error) {
	if c.marker == "" {
		return src, nil
	}
	at := -1
	if c.marker == "\x00empty" {
		i := strings.Index(src, "\n"+applyHead)
		if i < 0 {
			return "", fmt.Errorf("breakdown: no apply function in the library (update the cuts)")
		}
		at = i + 1 + len(applyHead)
	} else {
		for off := 0; off < len(src); {
			i := strings.Index(src[off:], "\n"+c.marker)
			if i < 0 {
				break
			}
			if at >= 0 {
				return "", fmt.Errorf("breakdown: %q starts more than one line of the library", c.marker)
			}
			at = off + i + 1
			off = at
		}
		if at < 0 {
			return "", fmt.Errorf("breakdown: no line of the library starts with %q (it changed: update the cuts)", c.marker)
		}
	}
	out := src[:at] + stopEarly + src[at:]
	first, rest, _ := strings.Cut(out, "\n")
	if first != "#!lua name="+lua.Library.Name {
		return "", fmt.Errorf("breakdown: the library's first line is %q", first)
	}
	rest = strings.Replace(rest, "redis.register_function('"+lua.FuncApply+"', apply)", "redis.register_function('"+fn+"', apply)", 1)
	rest = strings.Replace(rest, "redis.register_function('"+lua.FuncTransfer+"', transfer)\n", "", 1)
	rest = strings.Replace(rest, "redis.register_function('"+lua.FuncApplyJSON+"', apply_json)\n", "", 1)
	return "#!lua name=" + fn + "\n" + rest, nil
}

// breakdownVariants loads every stage on every master.
func breakdownVariants(ctx context.Context, e *env) ([]variant, error) {
	var out []variant
	for i, c := range cuts {
		fn := lua.FuncApply
		if c.marker != "" {
			fn = "atomledger_bench_cut" + strconv.Itoa(i)
		}
		src, err := variantSource(lua.Library.Source, c, fn)
		if err != nil {
			return nil, err
		}
		if err := e.loadLibrary(ctx, src); err != nil {
			return nil, fmt.Errorf("breakdown %q: %w", c.name, err)
		}
		out = append(out, variant{name: c.name, fn: fn, full: c.marker == ""})
	}
	if err := e.loadLibrary(ctx, callProbe); err != nil {
		return nil, fmt.Errorf("breakdown: %w", err)
	}
	return append(out, variant{name: strconv.Itoa(callProbeN) + " x redis.call HGET", fn: "bench_probe", probe: true}), nil
}
