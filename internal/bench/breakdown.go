package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/atomledger/atomledger/lua"
)

// The breakdown runs truncated copies of lua/apply.lua: each returns just
// before one of the script's parts, so the difference between two
// neighbours is what that part costs. The copies are made here, from the
// embedded source, and loaded under their own SHA; the script itself is
// never changed.

// cut is where a variant stops: before the first line that starts with
// marker, at the top level of the script.
type cut struct {
	name   string // the part this stage adds to the previous one
	marker string // "" for the whole script
}

var cuts = []cut{
	{"EVALSHA, 9 keys and the op arguments, empty script", "\x00empty"},
	{"idempotency GET", "local nops = "},
	{"argument checks, TIME, meta HMGET", "-- The fields the ops name"},
	{"pre-scan of the fields the ops name", "local function read("},
	{"definitions: 15 local functions, tables", "for i = 0, nops - 1 do\n  local b = 8"},
	{"op loop: reads (HMGET), checks, event ops JSON", "-- Every check passed."},
	{"result JSON", "local ops_json = concat(ev)"},
	{"digest (sha1hex of the event), XLEN, ZCARD", "-- Writes: sets first"},
	{"writes: HSET x6, ZADD", "local xadd = {'XADD'"},
	{"XADD of the event", "local out = 'ok\\n' .. result"},
	{"SET of the idempotency record, deletes, reply", ""},
}

// callProbe is a script that only makes callProbeN cheap redis.calls: what
// it costs over the empty script, divided by callProbeN, is the price of one
// redis.call from Lua, whatever the command does.
const callProbeN = 20

var callProbe = "#!lua\nfor i = 1, " + strconv.Itoa(callProbeN) + " do redis.call('HGET', KEYS[1], 'status') end\n" + stopEarly

// variant is one loaded stage.
type variant struct {
	name  string
	sha   string
	full  bool // the real script: its replies are checked
	probe bool // callProbe, not a stage of the waterfall
}

// stopEarly is what a truncated variant runs instead of the rest.
const stopEarly = "do return {0, ''} end\n"

// variantSource gives the source of the stage that stops before c.marker.
func variantSource(src string, c cut) (string, error) {
	switch c.marker {
	case "":
		return src, nil
	case "\x00empty":
		// Keep the #!lua line: flags change how Redis runs the script.
		first, _, _ := strings.Cut(src, "\n")
		return first + "\n" + stopEarly, nil
	}
	at := -1
	for off := 0; off < len(src); {
		i := strings.Index(src[off:], "\n"+c.marker)
		if i < 0 {
			break
		}
		if at >= 0 {
			return "", fmt.Errorf("breakdown: %q starts more than one line of apply.lua", c.marker)
		}
		at = off + i + 1
		off = at
	}
	if at < 0 {
		return "", fmt.Errorf("breakdown: no line of apply.lua starts with %q (the script changed: update the cuts)", c.marker)
	}
	return src[:at] + stopEarly + src[at:], nil
}

// breakdownVariants loads every stage on every master.
func breakdownVariants(ctx context.Context, e *env) ([]variant, error) {
	var out []variant
	for _, c := range cuts {
		src, err := variantSource(lua.Apply.Source, c)
		if err != nil {
			return nil, err
		}
		sha, err := e.loadScript(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("breakdown %q: %w", c.name, err)
		}
		out = append(out, variant{name: c.name, sha: sha, full: c.marker == ""})
	}
	sha, err := e.loadScript(ctx, callProbe)
	if err != nil {
		return nil, fmt.Errorf("breakdown: %w", err)
	}
	return append(out, variant{name: strconv.Itoa(callProbeN) + " x redis.call HGET", sha: sha, probe: true}), nil
}
