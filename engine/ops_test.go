package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/instructions"
)

// Every op of the contract, one at a time, on a holder with a little of everything.
func TestApply_EveryOp(t *testing.T) {
	needRedis(t)
	setup := func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "100.00").EarnPoints("100").GrantCoupon("c-1", time.Time{}).GrantCoupon("c-2", time.Time{})
	}
	cases := []struct {
		name  string
		op    func(instructions.Instruction) instructions.Instruction
		check func(t *testing.T, res instructions.Result, st instructions.State)
	}{
		{"credit adds to available", func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "0.50") },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, instructions.Balance{Available: "100.50", Frozen: "0.00"}, res.Balances["CNY"])
			}},
		{"credit of a new asset", func(in instructions.Instruction) instructions.Instruction { return in.Credit("BTC", "0.00000001") },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, instructions.Balance{Available: "0.00000001", Frozen: "0.00000000"}, st.Balances["BTC"])
			}},
		{"debit takes from available", func(in instructions.Instruction) instructions.Instruction { return in.Debit("CNY", "100") },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, instructions.Balance{Available: "0.00", Frozen: "0.00"}, st.Balances["CNY"])
			}},
		{"freeze moves available to frozen under a hold", func(in instructions.Instruction) instructions.Instruction {
			return in.Freeze("CNY", "40", "h1", 0)
		}, func(t *testing.T, res instructions.Result, st instructions.State) {
			assert.Equal(t, instructions.Balance{Available: "60.00", Frozen: "40.00"}, st.Balances["CNY"])
			assert.Equal(t, instructions.Hold{Legs: map[string]string{"CNY": "40.00"}, Coupons: []string{}}, st.Holds["h1"])
		}},
		{"freeze_points moves points to frozen", func(in instructions.Instruction) instructions.Instruction { return in.FreezePoints("60", "h1") },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, instructions.Points{Available: "40", Frozen: "60"}, st.Points)
				assert.Equal(t, map[string]string{"points": "60"}, st.Holds["h1"].Legs)
			}},
		{"lock_coupon holds a coupon", func(in instructions.Instruction) instructions.Instruction { return in.LockCoupon("c-1", "h1") },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, "held:h1", st.Coupons["c-1"])
				assert.Equal(t, []string{"c-1"}, st.Holds["h1"].Coupons)
			}},
		{"settle captures a hold", func(in instructions.Instruction) instructions.Instruction {
			return in.Freeze("CNY", "10", "h1", 0).Settle("h1")
		}, func(t *testing.T, res instructions.Result, st instructions.State) {
			assert.Equal(t, instructions.Balance{Available: "90.00", Frozen: "0.00"}, st.Balances["CNY"])
			assert.Empty(t, st.Holds)
		}},
		{"release returns a hold", func(in instructions.Instruction) instructions.Instruction {
			return in.Freeze("CNY", "10", "h1", 0).Release("h1")
		}, func(t *testing.T, res instructions.Result, st instructions.State) {
			assert.Equal(t, instructions.Balance{Available: "100.00", Frozen: "0.00"}, st.Balances["CNY"])
			assert.Empty(t, st.Holds)
		}},
		{"earn_points adds points", func(in instructions.Instruction) instructions.Instruction { return in.EarnPoints("5") },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, &instructions.Points{Available: "105", Frozen: "0"}, res.Points)
			}},
		{"spend_points takes points", func(in instructions.Instruction) instructions.Instruction { return in.SpendPoints("100") },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, instructions.Points{Available: "0", Frozen: "0"}, st.Points)
			}},
		{"grant_coupon adds an available coupon", func(in instructions.Instruction) instructions.Instruction {
			return in.GrantCoupon("c-3", time.Now().Add(time.Hour))
		}, func(t *testing.T, res instructions.Result, st instructions.State) {
			assert.Equal(t, map[string]string{"c-3": "available"}, res.Coupons)
		}},
		{"redeem_coupon uses a coupon", func(in instructions.Instruction) instructions.Instruction { return in.RedeemCoupon("c-2") },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, "used", st.Coupons["c-2"])
				assert.Equal(t, "available", st.Coupons["c-1"])
			}},
		{"suspend and resume set the status", func(in instructions.Instruction) instructions.Instruction { return in.Suspend() },
			func(t *testing.T, res instructions.Result, st instructions.State) {
				assert.Equal(t, "suspended", st.Status)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHolder(t, setup)
			res := apply(t, tc.op(newIn(h)))
			assert.Equal(t, int64(2), res.Seq)
			st := state(t, h)
			assert.Equal(t, res.Seq, st.Seq)
			tc.check(t, res, st)
		})
	}
}
