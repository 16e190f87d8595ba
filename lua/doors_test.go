package lua_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/lua"
)

// The library's functions as any client may call them (redis-cli, any
// arguments): whatever a call is given, an error writes nothing, and a
// success replayed answers the same and changes nothing.

// doorCall is one FCALL.
type doorCall struct {
	fn   string
	keys []string
	args []string
}

func (d doorCall) String() string {
	return fmt.Sprintf("FCALL %s %d %q %q", d.fn, len(d.keys), d.keys, d.args)
}

// The fixture's holder, its keys and the transfer it has begun.
const doorHolder = "rz"

var (
	doorSlot = cluster.HolderSlot(doorHolder)
	doorHash = cluster.Holder(doorHolder)
	doorOut  = cluster.Outbox(doorSlot)
	doorExp  = cluster.Expiry(doorSlot)
)

func doorJSONKeys(id string) []string {
	return []string{doorHash, cluster.Tx(doorHolder, id), doorOut, doorExp}
}

func transferKeys(id string) []string {
	return []string{cluster.Transfer(id), cluster.Transfers(cluster.TransferSlot(id))}
}

// otherTag is a tag over [0-9a-z] of the fixture's slot that is not the
// slot's own tag: keys named after it live in the slot, where no worker
// reads them.
var otherTag = sync.OnceValue(func() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	for i := 0; ; i++ {
		s := string([]byte{alphabet[i/46656%36], alphabet[i/1296%36], alphabet[i/36%36], alphabet[i%36]})
		if cluster.Slot("{"+s+"}") == doorSlot && s != cluster.SlotTag(doorSlot) {
			return s
		}
	}
})

// doorFixture empties the server and gives it a holder with 40.00 CNY, a
// hold o1 of 10.00 CNY, 50 points and a coupon, and a transfer t1 begun.
func doorFixture(t testing.TB, c *redis.Client) {
	ctx := context.Background()
	require.NoError(t, c.FlushAll(ctx).Err())
	text := `{"id":"open","holder":"rz","ops":[{"op":"open"},{"op":"credit","asset":"CNY","amount":"5000"},` +
		`{"op":"freeze","asset":"CNY","amount":"1000","hold":"o1","ttl_ms":600000},{"op":"earn_points","amount":"50"},` +
		`{"op":"grant_coupon","coupon":"c1"}]}`
	v, err := c.FCall(ctx, lua.FuncApplyJSON, doorJSONKeys("open"), text).Slice()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(v[1].(string), "ok\n"), v[1])
	_, err = c.FCall(ctx, lua.FuncTransfer, transferKeys("t1"), "begin", "t1", "fp", "{}", "30000", "a,b", "", "", "86400000").Slice()
	require.NoError(t, err)
	require.NoError(t, persistAll.Eval(ctx, c, nil).Err())
}

// doorCalls are the valid calls the mutations start from, under a fresh id
// (an id already applied would only replay): the JSON door's and apply's
// (each settling and releasing a little of o1, so that many apply before
// the fixture is laid anew; raising the holder's lanes, routed by a count)
// and transfer's.
func doorCalls(id string) []doorCall {
	return []doorCall{
		{lua.FuncApplyJSON, doorJSONKeys(id), []string{`{"id":"` + id + `","holder":"rz","ops":[{"op":"settle","hold":"o1","leg":"CNY","amount":"10"},{"op":"credit","asset":"CNY","amount":"500"}]}`, "86400000"}},
		{lua.FuncApplyJSON, doorJSONKeys(id), []string{`{"id":"` + id + `","holder":"rz","memo":"m","ops":[{"op":"freeze","asset":"CNY","amount":"100","hold":"h` + id + `","ttl_ms":60000},{"op":"grant_coupon","coupon":"c` + id + `","expires_ms":4102444800000},{"op":"release","hold":"o1","leg":"CNY","amount":"10"}]}`}},
		{lua.FuncApply, doorJSONKeys(id), []string{doorHolder, id, testFP, "86400000", "external", "", "", "",
			"settle", "CNY", "10", "o1", "", "0", "credit", "CNY", "500", "", "", "0", "freeze", "CNY", "100", "h" + id, "", "60000"}},
		{lua.FuncApply, doorJSONKeys(id), []string{doorHolder, id, testFP, "86400000", "external", "", "", "",
			"release", "CNY", "10", "o1", "", "0", "grant_coupon", "", "0", "", "c" + id, "4102444800000"}},
		{lua.FuncTransfer, transferKeys("t" + id), []string{"begin", "t" + id, "fp", "{}", "30000", "a,b", "0", "60000", "86400000"}},
		{lua.FuncTransfer, transferKeys("t1"), []string{"decide", "t1", "committed", "", "30000", "86400000", "2", "0", "1"}},
		{lua.FuncTransfer, transferKeys("t1"), []string{"decide", "t1", "aborted", "late", "30000"}},
		// Lanes, after the calls above so that the corpus's choices keep their call (11 calls).
		{lua.FuncApplyJSON, doorJSONKeys(id), []string{`{"id":"` + id + `","holder":"rz","ops":[{"op":"set_lanes","lanes":4},{"op":"earn_points","amount":"5"}]}`}},
		{lua.FuncApplyJSON, doorJSONKeys(id), []string{`{"id":"` + id + `","holder":"rz","ops":[{"op":"open","lanes":2}]}`}},
		// Routed by one lane, then made hot: routed so again, it is refused LANES_CHANGED.
		{lua.FuncApply, doorJSONKeys(id), []string{doorHolder, id, testFP, "86400000", "external", "", "", "1",
			"credit", "CNY", "500", "", "", "0", "set_lanes", "", "8", "", "", "0"}},
		{lua.FuncApply, doorJSONKeys(id), []string{doorHolder, id, testFP, "86400000", "external", "", "", "",
			"set_lanes", "", "2", "", "", "0", "grant_coupon", "", "0", "", "g" + id, "0"}},
	}
}

// Edge values an argument is replaced with. None is a small positive
// number: a key given a TTL of a few ms would expire between a call and
// its replay.
var doorEdgeArgs = []string{"", "0", "00", "086400000", "0086400000", "-1", "1e3", "0x10", " 1", "1 ", "+5", "5.",
	"9007199254740992", "999999999999999", "9999999999999999", "99999999999999999999", "inf", "nan", "x", "{", "a b",
	"ok\n", "\x00", strings.Repeat("i", 70), "86400000", "1000000", "committed", "begin", "finish", "decide", "read",
	"settle", "check", "take", "restore", "CNY", "points", "o1", "x:t1", "sweep-1", "t1", "rz", "set_lanes", "open", "1", "2", "8", "64", "65"}

// Edge JSON values a value of the instruction is replaced with.
var doorEdgeJSON = []string{"0x10", "0X1F", "007", "+5", "5.", "9007199254740990.7", "1e3", "1E3", "-0", "-1", "1.0", "inf",
	"nan", "Infinity", "null", "true", `""`, `"0"`, `"086400000"`, "[]", "{}", `"x:1"`, `"{a}"`, `"sweep-1"`, "1000000",
	"600000", "4102444800000", `"1000"`, `"settle"`, `"points"`, "\f1", "- 1", "1", "2", "8", "64", "65", `"set_lanes"`, `"open"`}

var jsonValue = regexp.MustCompile(`:("[^"]*"|[^,}\]]+)`)

// mutate changes d by the choices next gives (each below its argument).
func mutate(d doorCall, next func(n int) int) doorCall {
	d = doorCall{d.fn, slices.Clone(d.keys), slices.Clone(d.args)}
	for range 1 + next(3) {
		switch next(7) {
		case 0, 1: // an argument replaced
			if len(d.args) > 0 {
				d.args[next(len(d.args))] = doorEdgeArgs[next(len(doorEdgeArgs))]
			}
		case 2: // a value of the JSON replaced
			if d.fn == lua.FuncApplyJSON && len(d.args) > 0 {
				m := jsonValue.FindAllStringSubmatchIndex(d.args[0], -1)
				if len(m) > 0 {
					at := m[next(len(m))]
					d.args[0] = d.args[0][:at[2]] + doorEdgeJSON[next(len(doorEdgeJSON))] + d.args[0][at[3]:]
				}
			}
		case 3: // a key misspelt, or another key of the slot
			if len(d.keys) == 0 {
				continue
			}
			i := next(len(d.keys))
			other := []string{doorHash, cluster.Tx(doorHolder, "open"), doorOut, doorExp, cluster.Transfer("t1"),
				cluster.Transfers(cluster.TransferSlot("t1")), doorHash + ":new", strings.ToUpper(d.keys[i]),
				d.keys[i] + "x", "{" + otherTag() + "}:outbox", "{" + otherTag() + "}:expiry",
				strings.Replace(d.keys[i], ":tx:", "abc:", 1), strings.Replace(d.keys[i], ":tx:", ":TX:", 1), ""}
			if o := next(len(other) + 1); o < len(other) {
				d.keys[i] = other[o]
			} else if len(d.keys) == 4 { // both slot keys of another tag of the slot
				d.keys[2], d.keys[3] = "{"+otherTag()+"}:outbox", "{"+otherTag()+"}:expiry"
			}
		case 4: // an argument left out, or one more
			if next(2) == 0 && len(d.args) > 0 {
				d.args = d.args[:len(d.args)-1]
			} else {
				d.args = append(d.args, doorEdgeArgs[next(len(doorEdgeArgs))])
			}
		case 5: // a key left out, or one more
			if next(2) == 0 && len(d.keys) > 0 {
				d.keys = d.keys[:len(d.keys)-1]
			} else {
				d.keys = append(d.keys, doorOut)
			}
		case 6: // two arguments swapped
			if len(d.args) > 1 {
				i, j := next(len(d.args)), next(len(d.args))
				d.args[i], d.args[j] = d.args[j], d.args[i]
			}
		}
	}
	return d
}

// dumpAll is every key of the server and its DUMP, but for a hash: a hash
// too big for a listpack is a hash table, whose DUMP lists the fields in
// table order, which a mere read can change (Redis rehashes a step at a
// time on lookups); its fields and values, sorted, stand for it.
func dumpAll(t testing.TB, c *redis.Client) map[string]string {
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		typ, err := c.Type(ctx, k).Result()
		require.NoError(t, err)
		if typ == "hash" {
			h, err := c.HGetAll(ctx, k).Result()
			require.NoError(t, err)
			var fs []string
			for f, v := range h {
				fs = append(fs, f+"="+v)
			}
			slices.Sort(fs)
			m[k] = "hash " + strings.Join(fs, "\x00")
			continue
		}
		d, err := c.Dump(ctx, k).Result()
		require.NoError(t, err)
		m[k] = d
	}
	return m
}

// persistAll takes every key's TTL away, so that no key expires between a
// call and its checks (a mutated call may give a record or a transfer a TTL
// of a few ms). DUMP does not hold the TTL: the checks see the same.
var persistAll = redis.NewScript(`for _, k in ipairs(redis.call('KEYS', '*')) do redis.call('PERSIST', k) end return 0`)

// fcall makes call d, then takes every key's TTL away, in one MULTI: time
// stands still in it, so nothing the call wrote can expire first.
func fcall(c *redis.Client, d doorCall) ([]any, error) {
	ctx := context.Background()
	args := make([]any, len(d.args))
	for i, a := range d.args {
		args[i] = a
	}
	var fc *redis.Cmd
	_, _ = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		fc = p.FCall(ctx, d.fn, d.keys, args...)
		persistAll.Eval(ctx, p, nil)
		return nil
	})
	return fc.Slice()
}

// checkDoorCall makes call d and checks it: an error (a Redis error, or an
// outcome "err\n...") leaves every key as it was, but for a rejection that
// apply records under its id (a new record at KEYS[2]); a success of the
// JSON door or of transfer had the contract's keys; a success made again
// answers the same and changes nothing.
func checkDoorCall(t testing.TB, c *redis.Client, d doorCall) {
	before := dumpAll(t, c)
	v, err := fcall(c, d)
	after := dumpAll(t, c)
	outcome := ""
	if err == nil && d.fn != lua.FuncTransfer {
		outcome, _ = v[1].(string)
	}
	if err != nil || strings.HasPrefix(outcome, "err\n") {
		if err == nil && len(d.keys) > 1 && before[d.keys[1]] == "" && after[d.keys[1]] != "" {
			delete(after, d.keys[1]) // a rejection recorded under its id
		}
		if !assert.Equal(t, before, after, "%v answered %q %v: it changed Redis", d, v, err) {
			t.FailNow()
		}
		return
	}
	// A success of the checked doors had the contract's keys: the record of the
	// id under one spelling, the events where the relay reads them.
	switch d.fn {
	case lua.FuncApplyJSON:
		var in struct{ ID, Holder string }
		require.NoError(t, json.Unmarshal([]byte(d.args[0]), &in), "%v applied", d)
		assert.Equal(t, []string{cluster.Holder(in.Holder), cluster.Tx(in.Holder, in.ID), cluster.Outbox(cluster.HolderSlot(in.Holder)),
			cluster.Expiry(cluster.HolderSlot(in.Holder))}, d.keys, "%v applied under keys that are not the contract's", d)
	case lua.FuncTransfer:
		assert.Equal(t, transferKeys(d.args[1]), d.keys, "%v answered under keys that are not the contract's", d)
	}
	again, err := fcall(c, d)
	require.NoError(t, err, "%v again", d)
	switch d.fn {
	case lua.FuncApplyJSON:
		assert.Equal(t, []any{int64(1), v[1]}, again, "%v: the replay answers the first answer", d)
	case lua.FuncApply:
		assert.Equal(t, int64(1), again[0], "%v: a replay", d)
		assert.True(t, strings.HasPrefix(again[1].(string), "ok\n"), "%v: the replay answers %q", d, again[1])
	default:
		if v[0] == "new" {
			v[0] = "found"
		}
		assert.Equal(t, v, again, "%v: made again", d)
	}
	if !assert.Equal(t, after, dumpAll(t, c), "%v: made again, it changed Redis", d) {
		t.FailNow()
	}
}

// startDoors starts a server of its own with the library.
func startDoors(t testing.TB) *redis.Client {
	srv := clustertest.StartForTest(t, clustertest.Options{Standalone: true})
	c := redis.NewClient(&redis.Options{Addr: srv.Nodes[0].Addr, ContextTimeoutEnabled: true, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.FunctionLoadReplace(context.Background(), lua.Library.Source).Err())
	return c
}

// A seeded random test of calls mutated from valid ones, each checked by
// checkDoorCall; the fixture is laid anew every 40 calls.
func TestDoors_AnyCallWritesAllOrNothing(t *testing.T) {
	c := startDoors(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	calls := 1200
	if testing.Short() {
		calls = 200
	}
	for i := range calls {
		if i%40 == 0 {
			doorFixture(t, c)
		}
		calls := doorCalls(fmt.Sprintf("i%d", i))
		checkDoorCall(t, c, mutate(calls[r.IntN(len(calls))], r.IntN))
	}
}

// FuzzDoors is TestDoors_AnyCallWritesAllOrNothing with the fuzzer's
// choices: which call, then the mutations. It starts a Redis server of its
// own (each fuzzing worker one), so that make fuzz, which runs with -short,
// runs it too; a plain go test -short leaves it out.
func FuzzDoors(f *testing.F) {
	if testing.Short() && flag.Lookup("test.fuzz").Value.String() == "" {
		f.Skip("needs Redis")
	}
	for i := range doorCalls("") {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0, 0, 3})             // ARGV[4] (apply's ttl) or the JSON door's ttl
		f.Add(uint8(i), []byte{0, 3, 1, 3, 5, 0, 9}) // a key swapped
	}
	f.Add(uint8(0), []byte{0, 0, 1, 3})
	c := startDoors(f)
	f.Fuzz(func(t *testing.T, which uint8, choices []byte) {
		doorFixture(t, c)
		next := func(n int) int {
			if len(choices) == 0 || n <= 0 {
				return 0
			}
			b := int(choices[0])
			choices = choices[1:]
			return b % n
		}
		calls := doorCalls("f1")
		checkDoorCall(t, c, mutate(calls[int(which)%len(calls)], next))
	})
}

// jsonOutcome calls the JSON door and gives the outcome.
func jsonOutcome(t *testing.T, c *redis.Client, keys []string, args ...any) string {
	t.Helper()
	v, err := c.FCall(context.Background(), lua.FuncApplyJSON, keys, args...).Slice()
	require.NoError(t, err)
	return v[1].(string)
}

// The reproduction: a ttl of all digits that Redis refuses (a
// leading zero) passed the check and failed SET ... PX after the XADD and
// the HSET: the hold settled, the credit paid, no record, so each retry paid
// again. Now refused before anything is written, through either door.
func TestDoors_ATTLRedisWouldRefuseWritesNothing(t *testing.T) {
	c := startDoors(t)
	doorFixture(t, c)
	text := `{"id":"s1","holder":"rz","ops":[{"op":"settle","hold":"o1","leg":"CNY","amount":"1000"},{"op":"credit","asset":"CNY","amount":"500"}]}`
	for _, ttl := range []string{"086400000", "0", "00", "-1", "+1", " 1", "1e3", "1000000000000000"} {
		before := dumpAll(t, c)
		out := jsonOutcome(t, c, doorJSONKeys("s1"), text, ttl)
		assert.True(t, strings.HasPrefix(out, "err\nINVALID_INSTRUCTION\n-1\n"), "ttl %q: %q", ttl, out)
		assert.Equal(t, before, dumpAll(t, c), "ttl %q: nothing written", ttl)

		v, err := c.FCall(context.Background(), lua.FuncApply, doorJSONKeys("a1"), doorHolder, "a1", testFP, ttl, "external", "", "", "",
			"credit", "CNY", "500", "", "", "0").Slice()
		require.NoError(t, err)
		assert.Equal(t, "err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments", v[1], "ttl %q", ttl)
		assert.Equal(t, before, dumpAll(t, c), "ttl %q: nothing written", ttl)
	}
	out := jsonOutcome(t, c, doorJSONKeys("s1"), text)
	require.Equal(t, `ok
{"s":"2","st":"active","b":{"CNY":["4500","0"]},"c":{},"h":{}}`, out)
	assert.Equal(t, out, jsonOutcome(t, c, doorJSONKeys("s1"), text), "the retry replays")
	n, err := c.XLen(context.Background(), doorOut).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "one event for the open, one for the settle")
}

// KEYS[2] is exactly the holder's hash name, ":tx:", the id; KEYS[3] and
// KEYS[4] the outbox and expiry index of the slot's own tag, not another
// tag of the same slot (the relay would never read the event). Each
// refusal names the right key and writes nothing.
func TestDoors_TheJSONDoorTakesOnlyTheContractsKeys(t *testing.T) {
	c := startDoors(t)
	doorFixture(t, c)
	text := `{"id":"c1","holder":"rz","ops":[{"op":"credit","asset":"CNY","amount":"100"}]}`
	right := doorJSONKeys("c1")
	other := otherTag()
	for _, w := range []struct {
		i     int
		wrong string
	}{
		{1, "{h:rz}:TX:c1"}, {1, "{h:rz}abc:c1"}, {1, "{h:rz}:tx:c1 "}, {1, "{h:rz}:tx:x:t1:c1"},
		{2, "{" + other + "}:outbox"}, {3, "{" + other + "}:expiry"}, {2, "{h:rz}:outbox"}, {3, doorExp + "x"},
		{0, "{h:rz}x"}, {0, "{h:RZ}"},
	} {
		keys := slices.Clone(right)
		keys[w.i] = w.wrong
		before := dumpAll(t, c)
		out := jsonOutcome(t, c, keys, text)
		assert.True(t, strings.HasPrefix(out, "err\nINVALID_INSTRUCTION\n-1\n"), "KEYS[%d] %q: %q", w.i+1, w.wrong, out)
		assert.Contains(t, out, right[w.i], "KEYS[%d] %q: the message names the right key", w.i+1, w.wrong)
		assert.Equal(t, before, dumpAll(t, c), "KEYS[%d] %q: nothing written", w.i+1, w.wrong)
	}
	// Both slot keys of the other tag, as a client computing a wrong tag sends them.
	before := dumpAll(t, c)
	assert.Equal(t, "err\nINVALID_INSTRUCTION\n-1\nKEYS[3] must be {"+cluster.SlotTag(doorSlot)+"}:outbox, the outbox of holder rz and slot "+
		fmt.Sprint(doorSlot), jsonOutcome(t, c, []string{right[0], right[1], "{" + other + "}:outbox", "{" + other + "}:expiry"}, text))
	assert.Equal(t, before, dumpAll(t, c), "nothing written")
	assert.True(t, strings.HasPrefix(jsonOutcome(t, c, right, text), "ok\n"))
}

// apply, the engine's door, does not check its keys' names (the hot path),
// but four keys that are not distinct are refused: one name written as a
// stream, then as a sorted set or a hash, failed after the first write.
func TestDoors_ApplyRefusesAKeyGivenTwice(t *testing.T) {
	c := startDoors(t)
	doorFixture(t, c)
	ops := []any{"freeze", "CNY", "100", "o9", "", "60000"}
	for _, keys := range [][]string{
		{doorHash, cluster.Tx(doorHolder, "k1"), "{h:rz}:new", "{h:rz}:new"},
		{doorHash, cluster.Tx(doorHolder, "k1"), doorOut, doorOut},
		{"{h:rz}:n", cluster.Tx(doorHolder, "k1"), "{h:rz}:n", doorExp},
		{doorHash, cluster.Tx(doorHolder, "k1"), cluster.Tx(doorHolder, "k1"), doorExp},
	} {
		before := dumpAll(t, c)
		v, err := c.FCall(context.Background(), lua.FuncApply, keys,
			append([]any{doorHolder, "k1", testFP, "86400000", "external", "", "", "", "open", "", "0", "", "", "0"}, ops...)...).Slice()
		require.NoError(t, err, "%q", keys)
		assert.Equal(t, "err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments", v[1], "%q", keys)
		assert.Equal(t, before, dumpAll(t, c), "%q: nothing written", keys)
	}
}

// transfer writes its slot's index before the record: an index key of
// another type fails the call before anything is written. And counts,
// indexes and ms take no leading zero (begin stores the ttl as given, and
// the steps' records are written with it).
func TestDoors_TransferChecksBeforeItWrites(t *testing.T) {
	c := startDoors(t)
	doorFixture(t, c)
	ctx := context.Background()
	keys := transferKeys("t1")
	for _, args := range [][]any{
		{"begin", "t3", "fp", "{}", "30000", "a,b", "", "", "086400000"},
		{"begin", "t3", "fp", "{}", "030000", "a,b"},
		{"begin", "t3", "fp", "{}", "30000"},
		{"decide", "t1", "committed", "", "30000", "86400000", "02", "0", "1"},
		{"decide", "t1", "committed"},
		{"decide", "t1", "committed", "", "30000", "0", "2", "0", "1"},
		{"decide", "t1", "committed", "", "30000", "86400000", "999999999999", "0"},
	} {
		k := keys
		if args[0] == "begin" {
			k = transferKeys("t3")
		}
		before := dumpAll(t, c)
		_, err := c.FCall(ctx, lua.FuncTransfer, k, args...).Result()
		assert.Error(t, err, "%q", args)
		assert.Equal(t, before, dumpAll(t, c), "%q: nothing written", args)
	}
	for _, k := range [][]string{{keys[0]}, {keys[0], keys[0]}, {keys[0], doorOut}, {cluster.Transfer("t2"), keys[1]}} {
		before := dumpAll(t, c)
		_, err := c.FCall(ctx, lua.FuncTransfer, k, "decide", "t1", "committed", "", "30000").Result()
		assert.ErrorContains(t, err, "bad keys", "%q", k)
		assert.Equal(t, before, dumpAll(t, c), "%q: nothing written", k)
	}
	require.NoError(t, c.Del(ctx, keys[1]).Err())
	require.NoError(t, c.Set(ctx, keys[1], "not an index", 0).Err())
	before := dumpAll(t, c)
	_, err := c.FCall(ctx, lua.FuncTransfer, keys, "decide", "t1", "committed", "", "30000").Result()
	assert.ErrorContains(t, err, "WRONGTYPE")
	assert.Equal(t, before, dumpAll(t, c), "nothing written")
}

// The engine's op restore (a payment given back into the hold it was
// settled from) through the flat door as any client can call it: a leg that
// is no asset and a hold left empty are malformed, an amount that is no
// amount or one that would pass 2^53-1 is refused at its op; none writes
// anything but a rejection's record. The JSON door does not know the op.
func TestDoors_RestoreRefusesWhatIsNotOneWithoutWriting(t *testing.T) {
	c := startDoors(t)
	doorFixture(t, c)
	ctx := context.Background()
	for i, tc := range []struct{ leg, units, hold, want string }{
		{"cny", "100", "o1", "err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments"},
		{"CNY", "100", "", "err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments"},
		{"", "100", "o1", "err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments"},
		{"CNY", "1e3", "o1", "err\nINVALID_AMOUNT\n0\n"},
		{"CNY", "0", "o1", "err\nINVALID_AMOUNT\n0\n"},
		{"CNY", "9007199254740991", "o1", "err\nOVERFLOW\n0\nCNY:"},
	} {
		id := fmt.Sprintf("r%d", i)
		before := dumpAll(t, c)
		v, err := c.FCall(ctx, lua.FuncApply, doorJSONKeys(id), doorHolder, id, testFP, "86400000", "external", "", "", "",
			"restore", tc.leg, tc.units, tc.hold, "", "0").Slice()
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(v[1].(string), tc.want), "%+v: %q", tc, v[1])
		after := dumpAll(t, c)
		delete(after, doorJSONKeys(id)[1]) // a rejection's record, when the op judged it
		assert.Equal(t, before, after, "%+v: nothing written", tc)
	}
	out := jsonOutcome(t, c, doorJSONKeys("rj"), `{"id":"rj","holder":"rz","ops":[{"op":"restore","asset":"CNY","amount":"1","hold":"o1"}]}`)
	assert.Equal(t, "err\nINVALID_INSTRUCTION\n0\nunknown op", out)
}
