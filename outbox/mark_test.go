package outbox

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/cluster"
)

// TestRelay_WaitMarkIsInItsOutboxsSlotAndOutsideTheNotices: the key a read
// pipeline writes before its WAIT must live on the master of the outbox
// read (its slot), and no change notice may name it, or every round of a
// master with replicas would wake the relay and the sweeper for nothing.
func TestRelay_WaitMarkIsInItsOutboxsSlotAndOutsideTheNotices(t *testing.T) {
	prefixes := cluster.SlotKeyPrefixes()
	for _, slot := range []int{0, 1, 4242, cluster.Slots - 1} {
		outbox := cluster.Outbox(slot)
		mark := waitMark(outbox)
		assert.Equal(t, slot, cluster.Slot(mark), "%s: in the slot of %s", mark, outbox)
		for _, p := range prefixes {
			assert.False(t, strings.HasPrefix(mark, p), "%s: named by the notices of prefix %q", mark, p)
		}
	}
}
