package lua_test

// The library called as redis-cli would call it, by an adversarial review:
// each test but the last (TestDoors_HostileTextWritesNothing) is a call the
// library took before, and now refuses with an error reply and every key of
// the server as it was.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/lua"
)

// flatApply is FCALL apply with the fixture holder's keys for id, the fixed
// arguments of the engine and the ops given (six arguments each).
func flatApply(t *testing.T, c *redis.Client, id string, ops ...string) string {
	t.Helper()
	args := []any{doorHolder, id, testFP, "86400000", "external", "", "", ""}
	for _, o := range ops {
		args = append(args, o)
	}
	v, err := c.FCall(context.Background(), lua.FuncApply, doorJSONKeys(id), args...).Slice()
	require.NoError(t, err)
	return v[1].(string)
}

// callTransfer is FCALL transfer with keys and args; the reply or the error.
func callTransfer(c *redis.Client, keys []string, args ...string) ([]any, error) {
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	return c.FCall(context.Background(), lua.FuncTransfer, keys, a...).Slice()
}

// Before: transfer's finish (and decide with finish's arguments) takes
// the number of parts from its caller and never compares it with the
// record's own parts (its holders): the first finish writes "finished" of
// that length, and "done" follows from it.
//
//	FCALL transfer 2 {x:p3a} {<tag>}:transfers finish p3a 86400000 0
//
// on a committed transfer of two parts (holders "a,b"), none finished,
// marks it done: it leaves the recovery index and its record expires, so
// neither part's commit is ever sent (a half forever). And
//
//	FCALL transfer 2 {x:p3b} {<tag>}:transfers finish p3b 86400000 16 0
//
// writes a "finished" of 16 parts: the engine's own finish of both parts
// (count 2, parts 0 and 1) can then never make it done, and recovery works
// on it for ever. Likewise begin takes a payer index past the parts.
// Now finish's count must be the record's parts, begin's payer one of its
// parts and its holders 2 to 16: else an error reply, nothing written.
func TestDoors_TransferCountIsTheRecordsParts(t *testing.T) {
	c := startDoors(t)
	for i, call := range [][]string{
		{"finish", "86400000", "0"},                                                             // no part of two: done
		{"decide", "committed", "", "30000", "86400000", "1", "0"},                              // one part of two: done
		{"finish", "86400000", "16", "0"},                                                       // 16 parts of two: never done
		{"finish", "86400000", "3", "0", "1"},                                                   // 3 parts of two: never done
		{"begin", "fp", "{}", "30000", "a,b", "5", "60000", "86400000"},                         // payer 5 of two parts
		{"begin", "fp", "{}", "30000", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", "", "", "86400000"}, // 17 parts
	} {
		id := fmt.Sprintf("p3n%d", i)
		call = append([]string{call[0], id}, call[1:]...)
		t.Run(strings.Join(call, " "), func(t *testing.T) {
			doorFixture(t, c)
			if call[0] != "begin" { // a committed transfer of two parts, none finished
				_, err := callTransfer(c, transferKeys(id), "begin", id, "fp", "{}", "30000", "a,b", "", "", "86400000")
				require.NoError(t, err)
				_, err = callTransfer(c, transferKeys(id), "decide", id, "committed", "", "30000")
				require.NoError(t, err)
			}
			before := dumpAll(t, c)
			v, err := callTransfer(c, transferKeys(id), call...)
			assert.Error(t, err, "FCALL transfer %q answered %q: the count or index is not the record's parts", call, v)
			assert.Equal(t, before, dumpAll(t, c), "FCALL transfer %q changed Redis", call)
		})
	}
}

// Before: transfer checks that its record key is "{x:<id>}" and its
// index the one of "the slot", but computes that slot as the CRC16 of
// everything between the key's first and last byte, where Redis (and
// cluster.TransferSlot) hashes only up to the first '}'; and it never
// checks that the id is an id ([A-Za-z0-9_.:-]{1,60}, docs/transfers.md).
// So for the id "a}b" it takes, on a standalone Redis (the engine's
// one-address mode), the index of another slot than the record's,
//
//	FCALL transfer 2 '{x:a}b}' '{14p}:transfers' begin 'a}b' fp {} 30000 a,b '' '' 86400000
//
// answers "new" and writes the record and that index, and it refuses
// ("bad keys") the index cluster.Transfers(cluster.TransferSlot("a}b")),
// the one the recovery worker computes: the transfer can never be
// recovered. An empty id ('{x:}') or one with a space is taken too.
// Now the id must be a transfer id: else an error reply, nothing written.
func TestDoors_TransferRefusesAnIDThatIsNotOne(t *testing.T) {
	c := startDoors(t)
	doorFixture(t, c)
	for _, id := range []string{"a}b", "", "a b", strings.Repeat("i", 65)} {
		// The index of the slot the library computes (the CRC16 of "x:<id>" whole).
		libIndex := "{" + cluster.SlotTag(cluster.Slot("x:"+id)) + "}:transfers"
		for _, idx := range slices.Compact([]string{libIndex, cluster.Transfers(cluster.TransferSlot(id))}) {
			keys := []string{cluster.Transfer(id), idx}
			t.Run(fmt.Sprintf("%q %q", keys, id), func(t *testing.T) {
				before := dumpAll(t, c)
				v, err := callTransfer(c, keys, "begin", id, "fp", "{}", "30000", "a,b", "", "", "86400000")
				assert.Error(t, err, "FCALL transfer 2 %q begin %q ...: answered %q", keys, id, v)
				assert.Equal(t, before, dumpAll(t, c), "FCALL transfer 2 %q begin %q changed Redis", keys, id)
			})
		}
	}
}

// Before: transfer answers an action it does not know, or a decide with
// a status that is neither committed nor aborted, with an ordinary reply
// "missing" when the record does not exist, where the same call on an
// existing record is an error (ERR unknown action, ERR bad status
// argument): the caller is not told that its call is malformed.
//
//	FCALL transfer 2 {x:p3m} {<tag>}:transfers steal p3m      -> 1) "missing"
//	FCALL transfer 2 {x:p3m} {<tag>}:transfers decide p3m maybe -> 1) "missing"
//
// Now the action and its arguments are checked before the record is read:
// an error reply, as for an existing record.
func TestDoors_TransferRefusesAMalformedCallOnAMissingRecord(t *testing.T) {
	c := startDoors(t)
	doorFixture(t, c)
	for _, call := range [][]string{
		{"steal", "p3m"},
		{"decide", "p3m", "maybe", "", "30000"},
		{"decide", "p3m", "committed", "", "-1"},
		{"finish", "p3m", "0", "x"},
	} {
		// The same call on the existing record t1 is an error.
		onT1 := slices.Clone(call)
		onT1[1] = "t1"
		_, err := callTransfer(c, transferKeys("t1"), onT1...)
		require.Error(t, err, "%q on t1", onT1)

		before := dumpAll(t, c)
		v, err := callTransfer(c, transferKeys("p3m"), call...)
		assert.Error(t, err, "FCALL transfer %q answered %q", call, v)
		assert.Equal(t, before, dumpAll(t, c))
	}
}

// Before: apply takes an op's asset or leg that is empty, or "points",
// where one is needed (credit, debit, freeze): only the hold separators
// are refused (SAFE). With an empty asset
//
//	FCALL apply 4 {h:rz} {h:rz}:tx:p3e2 {61u}:outbox {61u}:expiry rz p3e2 <fp> 86400000 external '' '' '' credit '' 5 '' '' 0 freeze '' 5 h2 '' 0
//
// applies: it writes the fields "b:" and "f:", a hold "0|=5|" that reads
// back with no leg (hold() matches legs with '([^,=]+)=(%d+)'), so a whole
// release of h2 closes it and the 5 stay frozen for good, and an event
// whose movement names the asset "" (stored.ParseEvent refuses it: the
// ledger sets it aside and the holder's history stalls), the very things
// the SAFE check's comment says a direct caller cannot do. With the
// asset "points" a credit writes "b:points", which the ledger cannot tell
// from the points account (the same movement ["points","cp","avail",n] as
// earn_points): reconcile then finds drift.
// Now credit's, debit's and freeze's asset must be a code of the form
// [A-Z0-9_]{1,16}: else INVALID_INSTRUCTION (malformed function
// arguments), nothing written, as for the separators.
func TestDoors_ApplyRefusesAnAssetThatIsNotOne(t *testing.T) {
	c := startDoors(t)
	for i, op := range [][]string{
		{"credit", "", "5", "", "", "0"},
		{"debit", "", "5", "", "", "0"},
		{"credit", "", "5", "", "", "0", "freeze", "", "5", "h2", "", "0"}, // the hold "0|=5|"
		{"credit", "points", "5", "", "", "0"},
	} {
		id := fmt.Sprintf("p3e%d", i)
		doorFixture(t, c)
		before := dumpAll(t, c)
		out := flatApply(t, c, id, op...)
		assert.True(t, strings.HasPrefix(out, "err\nINVALID_INSTRUCTION\n"), "FCALL apply ... %q: %q", op, out)
		assert.Equal(t, before, dumpAll(t, c), "FCALL apply ... %q changed Redis", op)
	}
}

// Before: apply takes a settle (or release) with an amount and no leg,
// which the contract and the JSON door refuse (INVALID_INSTRUCTION,
// "amount without leg"), and settles the WHOLE hold while its event says
// the amount:
//
//	FCALL apply 4 {h:rz} {h:rz}:tx:p3s {61u}:outbox {61u}:expiry rz p3s <fp> 86400000 external '' '' '' settle '' 10 o1 '' 0
//
// answers ok with CNY ["4000","0"]: the 1000 of hold o1 went to the
// counterparty, not 10 (the bug docs/bad-input.md records as fixed for
// the JSON door's "leg": "").
// Now refused: INVALID_INSTRUCTION, nothing written.
func TestDoors_ApplyRefusesASettleWithAnAmountAndNoLeg(t *testing.T) {
	c := startDoors(t)
	for _, op := range []string{"settle", "release"} {
		doorFixture(t, c)
		before := dumpAll(t, c)
		out := flatApply(t, c, "p3s"+op, op, "", "10", "o1", "", "0")
		assert.True(t, strings.HasPrefix(out, "err\nINVALID_INSTRUCTION\n"), "FCALL apply ... %s '' 10 o1: %q", op, out)
		assert.Equal(t, before, dumpAll(t, c), "FCALL apply ... %s '' 10 o1 changed Redis", op)
	}
}

// Before: apply's ms argument (a hold's ttl_ms, a coupon's expires_ms)
// is taken up to 16 digits, past 2^53-1, where Lua's double is no longer
// exact: the value stored is not the one given. The contract keeps every
// stored value within 0 .. 2^53-1 (the JSON door refuses an expires_ms
// past it).
//
//	FCALL apply 4 ... grant_coupon '' 0 '' p3c 9999999999999999
//
// answers ok and stores c:p3c "available|10000000000000000"; a freeze with
// ttl_ms 9007199254740993 stores an expiry past 2^53 in the hold and the
// expiry index.
// Now an ms past 2^53-1, or a hold's ttl past the longest the engine
// takes (instructions.MaxTTLMs), is refused: INVALID_INSTRUCTION, nothing
// written.
func TestDoors_ApplyRefusesAnMsPast2To53(t *testing.T) {
	c := startDoors(t)
	for i, op := range [][]string{
		{"grant_coupon", "", "0", "", "p3c", "9999999999999999"},
		{"freeze", "CNY", "5", "p3h", "", "9007199254740993"},
		{"freeze", "CNY", "5", "p3h", "", "9007199254740991"},
		{"freeze", "CNY", "5", "p3h", "", "315360000001"},
		{"freeze_points", "", "5", "p3h", "", "315360000001"},
		{"lock_coupon", "", "0", "p3h", "c1", "315360000001"},
	} {
		doorFixture(t, c)
		before := dumpAll(t, c)
		out := flatApply(t, c, fmt.Sprintf("p3ms%d", i), op...)
		assert.True(t, strings.HasPrefix(out, "err\nINVALID_INSTRUCTION\n"), "FCALL apply ... %q: %q", op, out)
		assert.Equal(t, before, dumpAll(t, c), "FCALL apply ... %q changed Redis", op)
	}
}

// Calls the library refuses as the contract says, with nothing
// written, that lua/doors_test.go does not make (its mutations swap whole
// keys and values; these are inside the text, or keys of the contract's
// names holding another type).
func TestDoors_HostileTextWritesNothing(t *testing.T) {
	c := startDoors(t)
	ctx := context.Background()
	jsonText := func(id, rest string) string {
		return `{"id":"` + id + `","holder":"rz","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"q","ttl_ms":60000}]` + rest + `}`
	}
	for _, tc := range []struct {
		name, text, code string
		setup            func()
	}{
		// cjson stops reading at a NUL byte: what follows it is never seen.
		{name: "a NUL after the object", text: jsonText("h1", "") + "\x00", code: "INVALID_INSTRUCTION"},
		{name: "a NUL then another object", text: jsonText("h2", "") + "\x00" + `{"id":"h2"}`, code: "INVALID_INSTRUCTION"},
		// A key given twice, once through an escape (cjson keeps the last).
		{name: "memo twice, once escaped", text: jsonText("h3", `,"\u006demo":"a","memo":"b"`), code: "INVALID_INSTRUCTION"},
		// An escaped ttl_ms key with a fraction (cjson would round it).
		{name: "escaped ttl_ms 1.5", text: `{"id":"h4","holder":"rz","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"q","ttl\u005fms":1.5}]}`, code: "INVALID_INSTRUCTION"},
		{name: "a NUL in the memo, escaped", text: jsonText("h5", `,"memo":"a\u0000b"`), code: "INVALID_INSTRUCTION"},
		{name: "a lone surrogate in the memo", text: jsonText("h6", `,"memo":"\udc00"`), code: "INVALID_INSTRUCTION"},
		{name: "999 nested arrays as the memo", text: jsonText("h7", `,"memo":`+strings.Repeat("[", 999)+strings.Repeat("]", 999)), code: "INVALID_INSTRUCTION"},
		{name: "1001 nested objects", text: jsonText("h8", `,"x":`+strings.Repeat(`{"a":`, 1001)+"1"+strings.Repeat("}", 1001)), code: "INVALID_INSTRUCTION"},
		// The contract's keys holding another type: refused before the first write.
		{name: "the expiry index a stream", text: jsonText("h9", ""), setup: func() {
			require.NoError(t, c.Del(ctx, doorExp).Err())
			require.NoError(t, c.XAdd(ctx, &redis.XAddArgs{Stream: doorExp, Values: []string{"a", "b"}}).Err())
		}, code: "WRONGTYPE"},
		{name: "the outbox a sorted set", text: jsonText("h10", ""), setup: func() {
			require.NoError(t, c.Del(ctx, doorOut).Err())
			require.NoError(t, c.ZAdd(ctx, doorOut, redis.Z{Score: 1, Member: "a"}).Err())
		}, code: "WRONGTYPE"},
		{name: "the record a hash", text: jsonText("h11", ""), setup: func() {
			require.NoError(t, c.HSet(ctx, cluster.Tx(doorHolder, "h11"), "a", "b").Err())
		}, code: "WRONGTYPE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doorFixture(t, c)
			if tc.setup != nil {
				tc.setup()
			}
			id := "h1"
			if i := strings.Index(tc.text, `"id":"`); i >= 0 {
				id = tc.text[i+6 : i+6+strings.IndexByte(tc.text[i+6:], '"')]
			}
			before := dumpAll(t, c)
			v, err := c.FCall(ctx, lua.FuncApplyJSON, doorJSONKeys(id), tc.text).Slice()
			if err != nil {
				assert.ErrorContains(t, err, tc.code)
			} else {
				assert.True(t, strings.HasPrefix(v[1].(string), "err\n"+tc.code+"\n"), "%q", v)
			}
			assert.Equal(t, before, dumpAll(t, c))
		})
	}
	// transfer's begin with its slot's index a stream: refused at the ZADD,
	// its first write.
	doorFixture(t, c)
	require.NoError(t, c.XAdd(ctx, &redis.XAddArgs{Stream: transferKeys("h12")[1], Values: []string{"a", "b"}}).Err())
	before := dumpAll(t, c)
	_, err := callTransfer(c, transferKeys("h12"), "begin", "h12", "fp", "{}", "30000", "a,b", "", "", "86400000")
	assert.ErrorContains(t, err, "WRONGTYPE")
	assert.Equal(t, before, dumpAll(t, c))
}
