package clustertest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
)

// Start a local cluster, kill a master and wait for its replica to take over.
func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := clustertest.Start(ctx, clustertest.Options{Masters: 3, Replicas: 1})
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
	fmt.Println("a replica took over:", promoted != "" && promoted != master)
	// Output:
	// a replica took over: true
}
