package cluster_test

import (
	"fmt"

	"github.com/atomledger/atomledger/cluster"
)

func ExampleHolder() {
	k := cluster.Holder("u1001")
	fmt.Println(k)
	fmt.Println(cluster.Tx("u1001", "order-55-pay"))
	fmt.Println(cluster.Slot(k) == cluster.HolderSlot("u1001"))
	// Output:
	// {h:u1001}
	// {h:u1001}:tx:order-55-pay
	// true
}

// The outbox of a holder's slot lives in that same slot, so one script can
// apply an instruction and append its event.
func ExampleOutbox() {
	slot := cluster.HolderSlot("u1001")
	fmt.Println(slot, cluster.Outbox(slot), cluster.Slot(cluster.Outbox(slot)))
	// Output:
	// 3063 {h93}:outbox 3063
}

func ExampleSlot() {
	fmt.Println(cluster.Slot("123456789"))
	fmt.Println(cluster.Slot("{user1000}.following") == cluster.Slot("{user1000}.followers"))
	// Output:
	// 12739
	// true
}
