package ledger_test

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// ledgerDump is every row of every table of the ledger's schema, as text,
// sorted per table: what a repair that fails must leave as it was.
func ledgerDump(t *testing.T, l *ledger.Ledger) map[string][]string {
	t.Helper()
	ctx := context.Background()
	rows, err := l.Pool().Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'ledger' AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, tables)
	dump := map[string][]string{}
	for _, name := range tables {
		rows, err := l.Pool().Query(ctx, `SELECT to_jsonb(t)::text FROM ledger.`+name+` t`)
		require.NoError(t, err)
		var all []string
		for rows.Next() {
			var row string
			require.NoError(t, rows.Scan(&row))
			all = append(all, row)
		}
		require.NoError(t, rows.Err())
		slices.Sort(all)
		dump[name] = all
	}
	return dump
}

// setAsideByConstraint applies a workload's events to a fresh ledger while a
// constraint refuses the instructions of its first holder (and, with two, of
// its second): each one's first event is set aside, its later ones park.
// It gives the ledger, the workload's holders and the rows set aside, by
// holder, and a function that drops the constraint.
func setAsideByConstraint(t *testing.T, refused int) (*ledger.Ledger, []string, map[string]ledger.SetAsideEvent, func()) {
	t.Helper()
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	holders, evs := workload(t, seed, 10, 200)
	l := openLedger(t)
	var cond []string
	for _, h := range holders[:refused] {
		cond = append(cond, "holder <> '"+h+"'")
	}
	_, err := l.Pool().Exec(ctx, "ALTER TABLE ledger.instructions ADD CONSTRAINT refused CHECK ("+strings.Join(cond, " AND ")+")")
	require.NoError(t, err)
	rep, err := l.Apply(ctx, stored.Entries(evs...))
	require.NoError(t, err)
	require.Equal(t, refused, rep.SetAside)
	set, err := l.SetAside(ctx, 10)
	require.NoError(t, err)
	require.Len(t, set, refused)
	byHolder := map[string]ledger.SetAsideEvent{}
	for _, e := range set {
		byHolder[e.Holder] = e
	}
	drop := func() {
		_, err := l.Pool().Exec(ctx, "ALTER TABLE ledger.instructions DROP CONSTRAINT refused")
		require.NoError(t, err)
	}
	return l, holders, byHolder, drop
}

// docs/ledger.md, Events set aside: a repair "applies the event and every
// event of the holder parked behind it, and marks the row resolved, in one
// transaction (or changes nothing, with the error)", and "holder, seq and
// digest must stay". Each refusal here leaves every row of the ledger as it
// was; then the event as read repairs.
func TestRepair_RefusalsChangeNothing(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l, holders, set, drop := setAsideByConstraint(t, 1)
	x := holders[0]
	sa := set[x]

	before := ledgerDump(t, l)
	_, err := l.Repair(ctx, sa.ID, nil, "")
	require.Error(t, err, "the constraint still refuses it")
	assert.Contains(t, err.Error(), "refused")
	assert.Equal(t, before, ledgerDump(t, l), "a repair refused by PostgreSQL half-way changed the ledger")
	drop()

	before = ledgerDump(t, l)
	var orig map[string]string
	raw, err := l.Pool().Query(ctx, `SELECT key, value FROM ledger.set_aside, jsonb_each_text(convert_from(fields, 'UTF8')::jsonb) WHERE id = $1`, sa.ID)
	require.NoError(t, err)
	orig = map[string]string{}
	for raw.Next() {
		var k, v string
		require.NoError(t, raw.Scan(&k, &v))
		orig[k] = v
	}
	require.NoError(t, raw.Err())
	require.Equal(t, x, orig["holder"])
	for name, change := range map[string]func(f map[string]string){
		"another holder": func(f map[string]string) { f["holder"] = holders[1] },
		"another seq": func(f map[string]string) { // its state's seq too, or the event does not parse
			next := strconv.FormatInt(sa.Seq+1, 10)
			f["state"] = strings.Replace(f["state"], `"s":"`+f["seq"]+`"`, `"s":"`+next+`"`, 1)
			f["seq"] = next
		},
		"another digest": func(f map[string]string) { f["digest"] = strings.Repeat("ab", 20) },
	} {
		t.Run(name, func(t *testing.T) {
			f := maps.Clone(orig)
			change(f)
			_, err := l.Repair(ctx, sa.ID, f, "a note does not let it pass")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "must keep holder")
			assert.Equal(t, before, ledgerDump(t, l), "the ledger changed")
		})
	}

	rep, err := l.Repair(ctx, sa.ID, nil, "")
	require.NoError(t, err)
	assert.Equal(t, rep.Unparked+1, rep.Applied)
	requireSameAsRedis(t, l, holders)
}

// Two events set aside (two holders refused by one cause), repaired newest
// row first: each applies with its own holder's parked events, neither
// waits on the other, and the ledger ends as Redis is.
func TestRepair_TwoSetAsideOutOfOrder(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	l, holders, set, drop := setAsideByConstraint(t, 2)
	drop()
	first, second := set[holders[0]], set[holders[1]]
	if first.ID > second.ID {
		first, second = second, first
	}
	for _, sa := range []ledger.SetAsideEvent{second, first} {
		rep, err := l.Repair(ctx, sa.ID, nil, "")
		require.NoError(t, err, "set aside %d", sa.ID)
		assert.Equal(t, rep.Unparked+1, rep.Applied, "set aside %d: the event and its own holder's parked events", sa.ID)
		assert.Zero(t, rep.Parked+rep.SetAside)
	}
	n, err := l.SetAsideCount(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	requireSameAsRedis(t, l, holders)
}
