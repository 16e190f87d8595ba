package engine_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// DESIGN.md, "Redis key layout", read literally: the key names are spelled
// out here rather than taken from package cluster, so that a change of
// layout fails this test even when cluster and the engine change together.
func TestConformance2_KeyLayoutLiteral(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newID("lay")
	hash := "{h:" + h + "}"
	node, err := rdb.MasterForKey(ctx, hash)
	require.NoError(t, err)
	slot, err := node.ClusterKeySlot(ctx, hash).Result()
	require.NoError(t, err)

	before := serverNowMs(t)
	openID := newID("open")
	apply(t, instructions.New(openID, h).Open().Credit("CNY", "100.00").EarnPoints("50").
		GrantCoupon("c1", time.UnixMilli(4102444800000)).GrantCoupon("c2", time.Time{}))
	freezeID := newID("fr")
	r := apply(t, instructions.New(freezeID, h).Freeze("CNY", "10.00", "o1", time.Hour).
		FreezePoints("5", "o1").LockCoupon("c1", "o1").WithCounterparty("shop:1").WithMemo("order o1"))
	after := serverNowMs(t)
	expires := r.Holds["o1"].ExpiresMs

	t.Run("one hash per holder, a listpack while small, with the contract's fields", func(t *testing.T) {
		assert.Equal(t, "hash", node.Type(ctx, hash).Val())
		assert.Equal(t, "listpack", node.ObjectEncoding(ctx, hash).Val())
		m := node.HGetAll(ctx, hash).Val()
		var fields []string
		for f := range m {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		assert.Equal(t, []string{"b:CNY", "c:c1", "c:c2", "created_ms", "digest", "f:CNY", "h:o1", "p:a", "p:f", "seq", "status"}, fields)
		assert.Equal(t, "active", m["status"])
		assert.Equal(t, "2", m["seq"])
		assert.Equal(t, "9000", m["b:CNY"], "available minor units")
		assert.Equal(t, "1000", m["f:CNY"], "frozen minor units")
		assert.Equal(t, "45", m["p:a"])
		assert.Equal(t, "5", m["p:f"])
		assert.Regexp(t, `^available`, m["c:c2"])
		assert.Regexp(t, `^held:o1\b.*4102444800000`, m["c:c1"], "the coupon's state and its expiry")
		assert.Contains(t, m["h:o1"], strconv.FormatInt(expires, 10), "the hold's expiry")
		assert.Contains(t, m["h:o1"], "CNY=1000", "the hold's legs in minor units")
		assert.Contains(t, m["h:o1"], "c1", "the hold's coupons")
		created, err := strconv.ParseInt(m["created_ms"], 10, 64)
		require.NoError(t, err)
		assert.True(t, created >= before && created <= after, "created_ms %d is the server's time, in [%d, %d]", created, before, after)
	})
	t.Run("the idempotency records are strings with a TTL of 24h by default", func(t *testing.T) {
		for _, id := range []string{openID, freezeID} {
			key := hash + ":tx:" + id
			assert.Equal(t, "string", node.Type(ctx, key).Val(), key)
			ttl := node.PTTL(ctx, key).Val()
			assert.True(t, ttl > 23*time.Hour && ttl <= 24*time.Hour, "%s: TTL %v", key, ttl)
		}
		keys := node.Keys(ctx, hash+"*").Val()
		sort.Strings(keys)
		want := []string{hash, hash + ":tx:" + openID, hash + ":tx:" + freezeID}
		sort.Strings(want)
		assert.Equal(t, want, keys, "a holder has its hash and its idempotency records, nothing else")
	})
	t.Run("the slot's outbox is a stream in the holder's slot, one event per instruction", func(t *testing.T) {
		outbox := slotKey(t, node, int(slot), "outbox")
		assert.Equal(t, "stream", node.Type(ctx, outbox).Val())
		var evs []map[string]any
		for _, msg := range node.XRange(ctx, outbox, "-", "+").Val() {
			if msg.Values["holder"] == h {
				evs = append(evs, msg.Values)
			}
		}
		require.Len(t, evs, 2)
		ev := evs[1]
		assert.Equal(t, "2", ev["seq"])
		assert.Equal(t, freezeID, ev["id"])
		assert.Equal(t, "shop:1", ev["cp"], "the counterparty")
		assert.Equal(t, "order o1", ev["memo"])
		assert.Equal(t, "external", evs[0]["cp"], "the default counterparty")
		ts, err := strconv.ParseInt(ev["ts"].(string), 10, 64)
		require.NoError(t, err)
		assert.True(t, ts >= before && ts <= after, "the event's time %d is the server's, in [%d, %d]", ts, before, after)
		var ops []map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev["ops"].(string)), &ops))
		require.Len(t, ops, 3)
		assert.Equal(t, "freeze", ops[0]["op"])
		assert.Equal(t, "1000", ops[0]["units"], "amounts in minor units, as strings")
		assert.Equal(t, "o1", ops[0]["hold"])
		assert.Equal(t, node.HGet(ctx, hash, "digest").Val(), ev["digest"], "the hash's digest is its last event's")
		assert.NotEqual(t, evs[0]["digest"], ev["digest"], "each event chains a new digest")
	})
	t.Run("the slot's expiry index holds \"holder hold\" scored by the expiry", func(t *testing.T) {
		expiry := slotKey(t, node, int(slot), "expiry")
		assert.Equal(t, "zset", node.Type(ctx, expiry).Val())
		score, err := node.ZScore(ctx, expiry, h+" o1").Result()
		require.NoError(t, err)
		assert.Equal(t, float64(expires), score)
	})
	t.Run("a closed hold and a frozen field at zero leave the hash; status and seq stay", func(t *testing.T) {
		apply(t, instructions.New(newID("st"), h).Settle("o1").Debit("CNY", "90.00").SpendPoints("45").RedeemCoupon("c2"))
		m := node.HGetAll(ctx, hash).Val()
		for _, f := range []string{"h:o1", "f:CNY", "p:f"} {
			assert.NotContains(t, m, f)
		}
		assert.Equal(t, "3", m["seq"])
		assert.Equal(t, "active", m["status"])
		apply(t, instructions.New(newID("sus"), h).Suspend())
		assert.Equal(t, "suspended", node.HGet(ctx, hash, "status").Val())
		assert.Equal(t, "4", node.HGet(ctx, hash, "seq").Val())
	})
}

// slotKey finds the per-slot key "{<slot tag>}:<name>" of slot on node: the
// only key of that name whose hash tag lands in slot.
func slotKey(t *testing.T, node *redis.Client, slot int, name string) string {
	t.Helper()
	ctx := context.Background()
	re := regexp.MustCompile(`^\{[^{}]+\}:` + name + `$`)
	var found []string
	for _, k := range node.Keys(ctx, "*:"+name).Val() {
		if re.MatchString(k) && int(node.ClusterKeySlot(ctx, k).Val()) == slot {
			found = append(found, k)
		}
	}
	require.Len(t, found, 1, "keys named :%s in slot %d: %v", name, slot, found)
	return found[0]
}

// DESIGN.md: "Each event also carries a chained digest per holder (a hash
// of the previous digest and this event)". Recomputed here from the raw
// events as docs/events.md defines version 2, with no code of the project:
// each event's digest, the chain from "" on, and the hash's digest field
// equal to the last event's, through a transfer's part too (its xfer term).
func TestConformance2_DigestChainFromTheRawEvents(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").WithMemo("welcome \"home\" é")
	}, nil)
	h := hs[0]
	apply(t, instructions.New(newID("a"), h).Freeze("CNY", "1.00", "o1", time.Hour).WithCounterparty("shop:1"))
	apply(t, instructions.New(newID("b"), h).Settle("o1").WithMemo("fill"))
	transfer(t, instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
		part(h, ops().Debit("CNY", "2.00")), part(hs[1], ops().Credit("CNY", "2.00"))}})

	key := "{h:" + h + "}"
	node, err := rdb.MasterForKey(ctx, key)
	require.NoError(t, err)
	slot := int(node.ClusterKeySlot(ctx, key).Val())
	var evs []map[string]any
	for _, msg := range node.XRange(ctx, slotKey(t, node, slot, "outbox"), "-", "+").Val() {
		if msg.Values["holder"] == h {
			evs = append(evs, msg.Values)
		}
	}
	require.GreaterOrEqual(t, len(evs), 4)
	prev, sawXfer := "", false
	for i, ev := range evs {
		require.Equal(t, "2", ev["dv"], "event %d", i)
		require.Equal(t, strconv.Itoa(i+1), ev["seq"], "events in seq order")
		str := func(k string) string { s, _ := ev[k].(string); return s }
		sawXfer = sawXfer || str("xfer") != ""
		var b strings.Builder
		for _, term := range []string{prev, str("holder"), str("seq"), str("id"), str("fp"), str("ts"), str("cp"),
			str("ops"), str("state"), str("memo"), str("xfer")} {
			b.WriteString(strconv.Itoa(len(term)) + ":" + term)
		}
		sum := sha1.Sum([]byte(b.String()))
		want := hex.EncodeToString(sum[:])
		assert.Equal(t, want, ev["digest"], "event %d (%s)", i, ev["id"])
		prev = want
	}
	assert.True(t, sawXfer, "one event is a transfer's part")
	assert.Equal(t, prev, node.HGet(ctx, key, "digest").Val(), "the hash's digest is the last event's")
}
