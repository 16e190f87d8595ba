package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/atomledger/atomledger/lua"
)

// The breakdown runs truncated copies of the library's apply function: each
// returns just before one of the function's parts, which the library marks
// with "-- stage:" lines, so the difference between two neighbours is what
// that part costs. The copies are made here,
// from the embedded source, and loaded as libraries of their own (each
// function renamed, the transfer function left out: function names are
// global to a server); the library itself is never changed.

// stageMark opens a line of the library that names the part of apply
// after it ("  -- stage: <name>"): the library says where its parts are.
const stageMark = "  -- stage: "

// cut is where a variant stops: before the line at offset at of the
// library, or nowhere (at < 0) for the whole function.
type cut struct {
	name string // the part this stage adds to the previous one
	at   int
}

// cutsOf reads the library's stage marks. The first variant stops at the
// first mark (an empty function); the part each mark names costs the
// difference between the variant that stops at the next mark (or the whole
// function) and the one that stops at it.
func cutsOf(src string) ([]cut, error) {
	var out []cut
	name := "FCALL, 4 keys and the op arguments, empty function"
	for off := 0; ; {
		i := strings.Index(src[off:], "\n"+stageMark)
		if i < 0 {
			break
		}
		at := off + i + 1
		line, _, _ := strings.Cut(src[at:], "\n")
		out = append(out, cut{name: name, at: at})
		name = strings.TrimPrefix(line, stageMark)
		off = at
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("breakdown: the library has no %q lines", strings.TrimSpace(stageMark))
	}
	return append(out, cut{name: name, at: -1}), nil
}

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
// where c says.
func variantSource(src string, c cut, fn string) (string, error) {
	if c.at < 0 {
		return src, nil
	}
	out := src[:c.at] + stopEarly + src[c.at:]
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
	cuts, err := cutsOf(lua.Library.Source)
	if err != nil {
		return nil, err
	}
	var out []variant
	for i, c := range cuts {
		fn := lua.FuncApply
		if c.at >= 0 {
			fn = "atomledger_bench_cut" + strconv.Itoa(i)
		}
		src, err := variantSource(lua.Library.Source, c, fn)
		if err != nil {
			return nil, err
		}
		if err := e.loadLibrary(ctx, src); err != nil {
			return nil, fmt.Errorf("breakdown %q: %w", c.name, err)
		}
		out = append(out, variant{name: c.name, fn: fn, full: c.at < 0})
	}
	if err := e.loadLibrary(ctx, callProbe); err != nil {
		return nil, fmt.Errorf("breakdown: %w", err)
	}
	return append(out, variant{name: strconv.Itoa(callProbeN) + " x redis.call HGET", fn: "bench_probe", probe: true}), nil
}
