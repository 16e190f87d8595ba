package stored_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/stored"
)

// hashOf gives HolderFields as the hash Redis keeps.
func hashOf(f []any) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(f); i += 2 {
		m[f[i].(string)] = f[i+1].(string)
	}
	return m
}

func TestHolderFields_ReadBackByParseHolder(t *testing.T) {
	s := &stored.Snapshot{Holder: "u1", Status: "active", Seq: 7, Digest: "ab", CreatedMs: 1700000000000, Lanes: 3,
		Balances: map[string][2]int64{"CNY": {900, 100}, "USD": {5, 0}}, Points: &[2]int64{45, 0},
		Coupons: map[string]string{"c1": "available"}, Holds: map[string]string{"o1": "0|CNY=100|"}}
	m := hashOf(stored.HolderFields(s))
	assert.NotContains(t, m, stored.PrefixFrozen+"USD", "no frozen field at zero")
	assert.NotContains(t, m, stored.FieldPointsFrozen, "no frozen field at zero")
	assert.Equal(t, "900", m[stored.PrefixBalance+"CNY"])
	got := stored.ParseHolder("u1", m)
	assert.Equal(t, s, got)
	assert.Empty(t, stored.Differences(s, got, "other"))
}

func TestParseHolder_AbsentOrUnreadable(t *testing.T) {
	assert.Nil(t, stored.ParseHolder("u1", map[string]string{}), "no status: Redis lacks the holder")
	s := stored.ParseHolder("u1", map[string]string{stored.FieldStatus: "active", stored.FieldSeq: "x", stored.PrefixBalance + "CNY": "1.5"})
	assert.Equal(t, []string{`b:CNY "1.5"`, `seq "x"`}, s.Unreadable)
	assert.Equal(t, []string{`not a number in redis: b:CNY "1.5"`, `not a number in redis: seq "x"`,
		`not a number in ledger: b:CNY "1.5"`, `not a number in ledger: seq "x"`}, stored.Differences(s, s, "ledger"),
		"a holder with a value that is not a number differs from every state, its own included")
}

func TestDifferences_OneLineEach(t *testing.T) {
	r := &stored.Snapshot{Status: "active", Digest: "a", Balances: map[string][2]int64{"CNY": {1, 0}},
		Coupons: map[string]string{}, Holds: map[string]string{"o1": "0|CNY=1|"}}
	o := &stored.Snapshot{Status: "suspended", Digest: "a", Lanes: 1, Balances: map[string][2]int64{},
		Points: &[2]int64{0, 0}, Coupons: map[string]string{}, Holds: map[string]string{}}
	assert.Equal(t, []string{
		"status: redis active, ledger suspended",
		"balance CNY [available frozen]: redis [1 0], ledger [0 0]",
		"hold o1: redis 0|CNY=1|, ledger ",
	}, stored.Differences(r, o, "ledger"), "lanes 0 and 1 are one lane; no points and zero points are equal")
}
