package stored_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	got, err := stored.ParseHolder("u1", m)
	require.NoError(t, err)
	assert.Equal(t, s, got)
	assert.Empty(t, stored.Differences(s, got, "other"))
}

func TestParseHolder_AbsentOrUnreadable(t *testing.T) {
	s, err := stored.ParseHolder("u1", map[string]string{})
	assert.NoError(t, err)
	assert.Nil(t, s, "no status: Redis lacks the holder")
	_, err = stored.ParseHolder("u1", map[string]string{stored.FieldStatus: "active", stored.FieldSeq: "x", stored.PrefixBalance + "CNY": "1.5"})
	assert.EqualError(t, err, `holder u1: seq "x"`+"\n"+`CNY "1.5"`)
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
