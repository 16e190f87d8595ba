package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/reconcile"
)

// TestRepair_AllOnceTheCauseIsGone: a constraint on PostgreSQL's side
// refuses two holders' instructions while the relay runs: each one's first
// event is set aside, its later ones park, the others reach the ledger.
// Once the constraint is gone, "engined repair --all" applies both with the
// events parked behind them (exit 0, "repaired 2 of 2"), while the relay
// goes on carrying new events of every holder, the two included; then
// reconcile is clean, every holder in sync (seq and digest).
func TestRepair_AllOnceTheCauseIsGone(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	r := newLedgerRig(t)
	refused := []string{newID("refused"), newID("refused")}
	all := append([]string{newID("h"), newID("h"), newID("h")}, refused...)
	_, err := r.led.Pool().Exec(ctx, "ALTER TABLE ledger.instructions ADD CONSTRAINT refused CHECK (holder <> '"+
		refused[0]+"' AND holder <> '"+refused[1]+"')")
	require.NoError(t, err)
	var ins []instructions.Instruction
	for _, h := range all {
		ins = append(ins, instructions.New(newID("o"), h).Open().Credit("CNY", "10.00"),
			instructions.New(newID("c"), h).Credit("CNY", "1.00"), instructions.New(newID("d"), h).Debit("CNY", "2.00"))
	}
	require.Equal(t, len(ins), r.applyAll(t, ins))
	r.startRelay(t, nil)
	var rep *reconcile.Report
	require.Eventually(t, func() bool {
		rep, err = reconcile.Run(ctx, r.eng, r.led, nil)
		return err == nil && len(rep.SetAside) == 2 && rep.Parked == 4 && rep.InSync == len(all)-2
	}, 5*time.Minute, 100*time.Millisecond, "two set aside, four parked behind them")

	_, err = r.led.Pool().Exec(ctx, "ALTER TABLE ledger.instructions DROP CONSTRAINT refused")
	require.NoError(t, err)
	stop, wrote := make(chan struct{}), make(chan int)
	go func() { // the holders write on while the repair runs
		n := 0
		defer func() { wrote <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var more []instructions.Instruction
			for _, h := range all {
				more = append(more, instructions.New(newID("w"), h).Credit("CNY", "0.01"))
			}
			for _, o := range r.eng.ApplyBatch(ctx, more) {
				if o.Err == nil {
					n++
				}
			}
		}
	}()
	code, stdout, stderr := r.run("repair", "--all")
	close(stop)
	t.Logf("%d instructions applied while the repair ran", <-wrote)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "repaired 2 of 2")
	assert.Empty(t, stderr)
	rep = r.waitInSync(t)
	assert.False(t, rep.Drift, "%+v", rep)
	assert.Equal(t, len(all), rep.InSync)
	assert.Empty(t, rep.SetAside)
	assert.Zero(t, rep.Parked)
}
