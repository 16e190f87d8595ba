package ledgertest

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/libcall"
	"github.com/atomledger/atomledger/lua"
)

// ApplyOnLane applies in, addressed to a hot holder, on the holder lane (a
// lane of it, X#i), as the engine routes a credit there: the library's
// apply function, which takes the lane's keys no client can name. It gives
// an error unless the instruction applied.
func ApplyOnLane(ctx context.Context, rdb redis.Cmdable, eng *engine.Engine, in instructions.Instruction, lane string) error {
	_, args, err := eng.Encode(in)
	if err != nil {
		return err
	}
	args[libcall.Holder] = lane
	slot := cluster.HolderSlot(lane)
	keys := []string{cluster.Holder(lane), cluster.Tx(lane, in.ID), cluster.Outbox(slot), cluster.Expiry(slot)}
	v, err := rdb.FCall(ctx, lua.FuncApply, keys, args...).Slice()
	if err != nil {
		return err
	}
	if out, _ := v[1].(string); !strings.HasPrefix(out, "ok\n") {
		return fmt.Errorf("apply %s on %s: %q", in.ID, lane, out)
	}
	return nil
}
