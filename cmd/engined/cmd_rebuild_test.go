package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// TestRebuildCommand_RefusesTamperedFiguresUnlessForced holds what the
// reconcile and rebuild commands print and exit with (reconcile's own tests
// hold what they find): one balance field changed in Redis, its seq and
// digest untouched, is drift; rebuild refuses it, naming what differs, and
// rebuild --force writes the ledger's figures.
func TestRebuildCommand_RefusesTamperedFiguresUnlessForced(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	r.startRelay(t, nil)
	h := "tamper-" + time.Now().Format("150405.000000")
	_, err := r.eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100.00").Freeze("CNY", "10.00", "order-1", time.Hour))
	require.NoError(t, err)
	require.False(t, r.waitInSync(t).Drift)
	before, err := r.eng.State(ctx, h)
	require.NoError(t, err)

	require.NoError(t, r.rdb.HSet(ctx, cluster.Holder(h), stored.PrefixBalance+"CNY", "999900").Err())
	tampered, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	require.Equal(t, "9999.00", tampered.Balances["CNY"].Available)

	code, stdout, _ := r.run("reconcile")
	assert.Equal(t, exitDrift, code)
	assert.Regexp(t, `same seq, figures differ\s*\|\s*1\s*\|\s*yes`, stdout)

	code, stdout, stderr := r.run("rebuild", "--holder", h)
	assert.Equal(t, exitDrift, code, "stdout %s stderr %s", stdout, stderr)
	assert.Contains(t, stdout, "rebuilt 0, in sync 0, refused 1")
	assert.Contains(t, stderr, "balance CNY")
	assert.Contains(t, stderr, "(--force overwrites)")
	after, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, tampered, after, "without --force nothing is written")

	code, stdout, stderr = r.run("rebuild", "--holder", h, "--force")
	require.Equal(t, exitOK, code, "stdout %s stderr %s", stdout, stderr)
	assert.Contains(t, stdout, "rebuilt 1,")
	after, err = r.eng.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the ledger's figures")

	code, stdout, _ = r.run("reconcile")
	assert.Equal(t, exitOK, code, "clean again:\n%s", stdout)
	code, stdout, _ = r.run("rebuild", "--holder", h)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "rebuilt 0, in sync 1")
}
