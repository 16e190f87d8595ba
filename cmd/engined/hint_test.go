package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// TestReconcile_OneClusterAddressSaysHowToNameACluster: given one node of
// a cluster without --redis-cluster, reconcile meets MOVED and says what the
// address is and which flag says so.
func TestReconcile_OneClusterAddressSaysHowToNameACluster(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	var ins []instructions.Instruction
	for i := range 12 { // holders on every master
		ins = append(ins, instructions.New("o", newID(fmt.Sprintf("mv%d", i))).Open())
	}
	require.Equal(t, len(ins), r.applyAll(t, ins))
	r.startRelay(t, nil)
	require.Zero(t, r.waitInSync(t).EventsInFlight)

	r.env["ENGINED_REDIS_ADDRS"] = r.c.Addrs()[0]
	code, _, stderr := r.run("reconcile")
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, stderr, "MOVED")
	assert.Contains(t, stderr, "the address is a node of a Redis Cluster: say so with --redis-cluster")
}
