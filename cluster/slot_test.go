package cluster

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlot_KnownVectors(t *testing.T) {
	tests := []struct {
		key  string
		want int
	}{
		{"123456789", 12739}, // the CRC-16/XMODEM check value, 0x31C3
		{"", 0},
		{"foo", 12182},
		{"somekey", 11058},
		{"foo{hash_tag}", 2515},
		{"{hash_tag}", 2515},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Slot(tt.key), "Slot(%q)", tt.key)
	}
	assert.Equal(t, Slot("{user1000}.following"), Slot("{user1000}.followers"))
}

func TestHashTag(t *testing.T) {
	tests := []struct {
		name, key, want string
	}{
		{"a key without braces hashes whole", "user1000", "user1000"},
		{"the tag is what the first braces hold", "{user1000}.following", "user1000"},
		{"the tag may be anywhere", "a{b}c", "b"},
		{"only the first pair counts", "{a}{b}", "a"},
		{"an empty tag hashes the whole key", "{}user", "{}user"},
		{"an empty first tag hides a later one", "{}{a}", "{}{a}"},
		{"an opening brace alone hashes the whole key", "{user", "{user"},
		{"a closing brace before the opening one is text", "}a{b}", "b"},
		{"nested braces end at the first closing one", "{{a}}", "{a"},
		{"the tag runs to the first closing brace", "x{a{b}c}", "a{b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, HashTag(tt.key))
		})
	}
}

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
		"{a", "a}", "{ }", "{\x00}", "\xff{\xfe}", "{h:}", "{h:u1001}:meta",
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
		keys = append(keys, Holder(holder), Tx(holder, randomString("0123456789abcdef-", 32)))
	}
	for s := range Slots {
		keys = append(keys, Outbox(s), Expiry(s))
	}
	require.GreaterOrEqual(t, len(keys), 10000)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
			if !assert.Equal(t, int(want), Slot(chunk[i]), "Slot(%q)", chunk[i]) {
				return
			}
		}
	}
}

// FuzzSlot checks the table-driven CRC and the tag rule against a plain
// bit-by-bit CRC and a byte loop written like the server's keyHashSlot.
func FuzzSlot(f *testing.F) {
	for _, k := range []string{"", "123456789", "{a}b", "{}a", "{{a}}", "a{b", "\xff{}"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if got, want := Slot(key), referenceSlot(key); got != want {
			t.Fatalf("Slot(%q) = %d, want %d", key, got, want)
		}
	})
}

func referenceSlot(key string) int {
	s := 0
	for s < len(key) && key[s] != '{' {
		s++
	}
	if s < len(key) {
		e := s + 1
		for e < len(key) && key[e] != '}' {
			e++
		}
		if e < len(key) && e != s+1 {
			key = key[s+1 : e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc & 0x3FFF)
}
