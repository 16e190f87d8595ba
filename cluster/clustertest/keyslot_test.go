package clustertest

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
)

// TestSlot_MatchesKeyslot compares Slot with the server's CLUSTER KEYSLOT on
// random keys, keys full of braces, edge cases and every key name this
// package builds.
func TestSlot_MatchesKeyslot(t *testing.T) {
	c := sharedCluster(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))

	keys := []string{
		"", "{", "}", "{}", "}{", "{}{a}", "{a}{b}", "{{a}}", "a{b{c}d}", "}{a}",
		"{a", "a}", "{ }", "{\x00}", "\xff{\xfe}", "{h:}", "{h:u1001}:tx:a",
	}
	randomString := func(alphabet string, maxLen int) string {
		b := make([]byte, rng.IntN(maxLen+1))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	var allBytes strings.Builder
	for b := range 256 {
		allBytes.WriteByte(byte(b))
	}
	for range 4000 {
		keys = append(keys, randomString(allBytes.String(), 40))
	}
	for range 4000 {
		keys = append(keys, randomString("ab{}{}{}xy", 12))
	}
	for range 500 {
		holder := randomString("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-", 64)
		keys = append(keys, cluster.Holder(holder), cluster.Tx(holder, randomString("0123456789abcdef-", 32)))
	}
	for s := range cluster.Slots {
		keys = append(keys, cluster.Outbox(s), cluster.Expiry(s))
	}
	// The README gives this count.
	require.Len(t, keys, 17+4000+4000+500*2+2*cluster.Slots)
	require.GreaterOrEqual(t, len(keys), 10000)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rdb := c.admin(c.live()[0])
	const batch = 5000
	for start := 0; start < len(keys); start += batch {
		chunk := keys[start:min(start+batch, len(keys))]
		pipe := rdb.Pipeline()
		for _, k := range chunk {
			pipe.ClusterKeySlot(ctx, k)
		}
		cmds, err := pipe.Exec(ctx)
		require.NoError(t, err)
		for i, cmd := range cmds {
			want, err := cmd.(interface{ Result() (int64, error) }).Result()
			require.NoError(t, err)
			if !assert.Equal(t, int(want), cluster.Slot(chunk[i]), "cluster.Slot(%q)", chunk[i]) {
				return
			}
		}
	}
}
