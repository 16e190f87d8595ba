package cluster_test

import (
	"context"
	"fmt"
	"log"
	"time"

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

// Start a local cluster, kill a master and wait for its replica to take over.
func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{Masters: 3, Replicas: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Stop()

	rdb := c.Client(nil)
	defer rdb.Close()
	if err := rdb.Set(ctx, "greeting", "hello", 0).Err(); err != nil {
		log.Fatal(err)
	}

	master, err := c.MasterOf(ctx, cluster.Slot("greeting"))
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Kill(master); err != nil {
		log.Fatal(err)
	}
	promoted, err := c.WaitFailover(ctx, master)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("new master:", promoted)
}
