package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// A transfer's driver killed between two steps of the protocol: the child
// process (this test binary again) runs the steps named in envDriverSteps
// against the parent's cluster, then sends itself SIGKILL.
const (
	envDriverSteps    = "ATOMLEDGER_TEST_DRIVER_STEPS"    // "begin,prepare:0,decide,commit:0"
	envDriverTransfer = "ATOMLEDGER_TEST_DRIVER_TRANSFER" // the transfer, JSON
	envDriverRedis    = "ATOMLEDGER_TEST_DRIVER_REDIS"    // the cluster's addresses, comma-separated
	envDriverTTL      = "ATOMLEDGER_TEST_DRIVER_TTL"      // the driver's idempotency TTL, if not the default
)

func runDriverThenDie(steps string) int {
	var t instructions.Transfer
	if err := json.Unmarshal([]byte(os.Getenv(envDriverTransfer)), &t); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 2
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(os.Getenv(envDriverRedis), ","), ReadTimeout: 10 * time.Second})
	ttl, _ := time.ParseDuration(os.Getenv(envDriverTTL))
	e := engine.New(c, &engine.Options{TransferTimeout: shortTransferTimeout, IdempotencyTTL: ttl})
	if err := driverSteps(context.Background(), e, t, steps); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 3
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

func driverSteps(ctx context.Context, e *engine.Engine, t instructions.Transfer, steps string) error {
	for _, s := range strings.Split(steps, ",") {
		step, part, _ := strings.Cut(s, ":")
		i, _ := strconv.Atoi(part)
		if err := e.TransferStep(ctx, t, step, i); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// totals sums available and frozen per asset over holders.
func totals(t *testing.T, holders ...string) map[string]string {
	t.Helper()
	sum := map[string]int64{}
	for _, h := range holders {
		for a, b := range state(t, h).Balances {
			scale, _ := eng.Assets().Scale(a)
			for _, v := range []string{b.Available, b.Frozen} {
				n, ok := instructions.ToUnits(v, scale)
				if ok {
					sum[a] += n
				}
			}
		}
	}
	out := map[string]string{}
	for a, n := range sum {
		out[a] = strconv.FormatInt(n, 10)
	}
	return out
}

// shortTransferTimeout lets the recovery worker take transfers over soon.
const shortTransferTimeout = 200 * time.Millisecond

// shortTimeout is an engine whose transfers recovery takes over soon.
func shortTimeout() *engine.Engine {
	return engine.New(rdb, &engine.Options{TransferTimeout: shortTransferTimeout})
}

// twoPhase is such an engine that runs every transfer in two phases, even one
// with a single payer: its idempotency TTL is too short for the one-payer
// path (docs/transfers.md, One payer).
func twoPhase() *engine.Engine {
	return engine.New(rdb, &engine.Options{TransferTimeout: shortTransferTimeout, IdempotencyTTL: time.Second})
}

// twoPhaseMinutes also runs every transfer in two phases, its TTL minutes,
// not a second: for a test whose next driver must find its steps' records
// (a prepare sent again replays; applied again, it is refused HOLD_EXISTS
// and the transfer aborts) however slow the machine. No recovery takes its
// transfers over before a minute.
func twoPhaseMinutes() *engine.Engine {
	return engine.New(rdb, &engine.Options{TransferTimeout: time.Minute, IdempotencyTTL: 5 * time.Minute})
}

// recoverUntilComplete runs recovery passes until the transfer is complete.
func recoverUntilComplete(t *testing.T, id string) engine.TransferState {
	t.Helper()
	return recoverWith(t, shortTimeout(), id)
}

// killDriver runs a driver of tr in a process of its own that takes steps
// (TransferStep's, comma-separated) with idempotency TTL ttl (0: the
// default), then dies by SIGKILL.
func killDriver(t *testing.T, tr instructions.Transfer, steps string, ttl time.Duration) {
	t.Helper()
	body, err := json.Marshal(tr)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envDriverSteps+"="+steps, envDriverTransfer+"="+string(body),
		envDriverRedis+"="+strings.Join(testCluster.Addrs(), ","), envDriverTTL+"="+ttl.String())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the driver must die, not exit: %v\n%s", err, out)
	ws, _ := exit.Sys().(syscall.WaitStatus)
	require.Equal(t, syscall.SIGKILL, ws.Signal(), "%s", out)
}

func TestTransfer_RecoveryAfterTheDriverIsKilled(t *testing.T) {
	needRedis(t)
	cases := []struct {
		name, steps string
		during      string // the status a reader sees before recovery
		want        string
	}{
		{"after preparing one part", "begin,prepare:0", engine.TransferPending, engine.TransferAborted},
		{"after the commit point", "begin,prepare:0,prepare:1,decide", engine.TransferCommitted, engine.TransferCommitted},
		{"after finishing one part", "begin,prepare:0,prepare:1,decide,commit:1", engine.TransferCommitted, engine.TransferCommitted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t,
				func(in instructions.Instruction) instructions.Instruction {
					return in.Credit("USDT", "1000").Freeze("USDT", "500", "ord-1", time.Hour)
				},
				func(in instructions.Instruction) instructions.Instruction {
					return in.Credit("BTC", "0.01").Freeze("BTC", "0.01", "ord-7", time.Hour)
				})
			before := totals(t, hs...)
			b0, s0 := valueOf(state(t, hs[0])), valueOf(state(t, hs[1]))
			tr := trade(newID("trade"), hs[0], "ord-1", hs[1], "ord-7", "100", "0.002")
			killDriver(t, tr, c.steps, 0)

			during, err := eng.GetTransfer(context.Background(), tr.ID)
			require.NoError(t, err)
			assert.Equal(t, c.during, during.Status)
			assert.False(t, during.Complete)

			st := recoverUntilComplete(t, tr.ID)
			assert.Equal(t, c.want, st.Status)
			assert.Equal(t, before, totals(t, hs...), "money is conserved")
			b, s := state(t, hs[0]), state(t, hs[1])
			if c.want == engine.TransferAborted {
				assert.Equal(t, b0, valueOf(b))
				assert.Equal(t, s0, valueOf(s))
				return
			}
			assert.Equal(t, instructions.Balance{Available: "500.000000", Frozen: "400.000000"}, b.Balances["USDT"])
			assert.Equal(t, "0.00200000", b.Balances["BTC"].Available)
			assert.Equal(t, instructions.Balance{Available: "0.00000000", Frozen: "0.00800000"}, s.Balances["BTC"])
			assert.Equal(t, "100.000000", s.Balances["USDT"].Available)
			assert.NotContains(t, b.Holds, "x:"+tr.ID)
			assert.NotContains(t, s.Holds, "x:"+tr.ID)

			again, err := eng.Transfer(context.Background(), tr)
			require.NoError(t, err)
			assert.Equal(t, engine.TransferCommitted, again.Status, "the client's retry learns the outcome")
			assert.True(t, again.Replayed)
		})
	}
}

// TestTransfer_AbortFencesAPrepareStillOnItsWay stalls a driver right after
// begin; recovery aborts the transfer; the driver's next step, arriving
// after, is answered by the fence and takes nothing. Under the two phases
// (an exchange: both parts pay) that step is the first part's prepare; with
// one payer it is the payer's run, the commit point itself. The fences live
// the engine's default TTL, a day: the stalled step may come as late as a
// slow machine makes it.
func TestTransfer_AbortFencesAPrepareStillOnItsWay(t *testing.T) {
	needRedis(t)
	for _, c := range []struct {
		name, step string
		parts      func(hs []string) []instructions.Part
	}{
		{"two phases", "prepare", func(hs []string) []instructions.Part {
			return []instructions.Part{part(hs[0], ops().Debit("CNY", "4.00").Credit("BTC", "0.001")),
				part(hs[1], ops().Credit("CNY", "4.00").Debit("BTC", "0.001"))}
		}},
		{"one payer", "commit", func(hs []string) []instructions.Part {
			return []instructions.Part{part(hs[0], ops().Debit("CNY", "4.00")), part(hs[1], ops().Credit("CNY", "4.00"))}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t,
				func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") },
				func(in instructions.Instruction) instructions.Instruction { return in.Credit("BTC", "1") })
			b0 := valueOf(state(t, hs[0]))
			tr := instructions.Transfer{ID: newID("pay"), Parts: c.parts(hs)}
			ctx, driver := context.Background(), shortTimeout()
			require.NoError(t, driver.TransferStep(ctx, tr, "begin", 0))
			st := recoverUntilComplete(t, tr.ID) // the driver stalls past the deadline
			require.Equal(t, engine.TransferAborted, st.Status)
			require.NotNil(t, st.Error)
			assert.ErrorIs(t, st.Error, engine.ErrUnavailable)
			assert.Nil(t, st.PartIndex, "no part was rejected: it ran out of time")

			err := driver.TransferStep(ctx, tr, c.step, 0) // the stalled driver wakes up
			var e *engine.Error
			require.ErrorAs(t, err, &e)
			assert.True(t, e.Replayed, "the fence answers for the step")
			assert.Equal(t, b0, valueOf(state(t, hs[0])), "nothing was taken")
		})
	}
}

func TestTransfer_OrderCancelledWhileAFillIsPrepared(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("USDT", "1000").Freeze("USDT", "500", "ord-1", time.Hour)
		},
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("BTC", "1") })
	tr := trade(newID("fill"), hs[0], "ord-1", hs[1], "ord-7", "100", "0.002") // the seller has no ord-7
	ctx, driver := context.Background(), shortTimeout()
	require.NoError(t, driver.TransferStep(ctx, tr, "begin", 0))
	require.NoError(t, driver.TransferStep(ctx, tr, "prepare", 0))
	res := apply(t, newIn(hs[0]).Release("ord-1")) // the buyer cancels the order
	assert.Equal(t, instructions.Balance{Available: "900.000000", Frozen: "100.000000"}, res.Balances["USDT"],
		"the fill's 100 stays reserved under the transfer")

	st := recoverUntilComplete(t, tr.ID)
	require.Equal(t, engine.TransferAborted, st.Status)
	b := state(t, hs[0])
	assert.Equal(t, instructions.Balance{Available: "1000.000000", Frozen: "0.000000"}, b.Balances["USDT"],
		"with the order gone, the aborted fill goes back to available")
	assert.Empty(t, b.Holds)
}
