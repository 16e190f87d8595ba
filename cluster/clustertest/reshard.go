package clustertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
)

// Moving a slot by hand, as `redis-cli --cluster reshard` does, in two
// halves so that a test can act while the slot is half-way: MoveSlotKeys
// (IMPORTING on the target, MIGRATING on the source, MIGRATE of every key of
// the slot), then AssignSlot (the new owner announced to both masters).

// MoveSlotKeys is the first half of moving slot from the master src to the
// master dst: the slot IMPORTING on dst and MIGRATING on src, every key of
// it moved. The slot stays src's, in migration, until AssignSlot. It
// returns the number of keys moved, and fails tb on any error.
func MoveSlotKeys(ctx context.Context, tb TB, slot int, src, dst *Node) int {
	tb.Helper()
	sc, dc := slotClients(src, dst)
	defer sc.Close()
	defer dc.Close()
	host, port, err := net.SplitHostPort(dst.Addr)
	must(tb, err, "target address")
	must(tb, dc.Do(ctx, "cluster", "setslot", slot, "importing", src.ID).Err(), "SETSLOT IMPORTING")
	must(tb, sc.Do(ctx, "cluster", "setslot", slot, "migrating", dst.ID).Err(), "SETSLOT MIGRATING")
	moved := 0
	for {
		keys, err := sc.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		must(tb, err, "CLUSTER GETKEYSINSLOT")
		if len(keys) == 0 {
			break
		}
		args := []any{"migrate", host, port, "", 0, 5000, "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		err = sc.Do(ctx, args...).Err()
		// A node that missed the cluster bus's beats for cluster-node-timeout
		// (a loaded machine) holds the cluster down until they come again;
		// the target then refuses the keys, which stay on the source.
		for down := time.Now(); err != nil && strings.Contains(err.Error(), "CLUSTERDOWN") && time.Since(down) < time.Minute; {
			time.Sleep(100 * time.Millisecond)
			err = sc.Do(ctx, args...).Err()
		}
		must(tb, err, "MIGRATE of keys of the slot")
		moved += len(keys)
	}
	return moved
}

// AssignSlot is the second half of moving slot: dst announced as the
// slot's owner to both masters. It fails tb on any error.
func AssignSlot(ctx context.Context, tb TB, slot int, src, dst *Node) {
	tb.Helper()
	sc, dc := slotClients(src, dst)
	defer sc.Close()
	defer dc.Close()
	// The target first, so that the source's MOVED never points at a
	// master that does not know it owns the slot yet.
	must(tb, dc.Do(ctx, "cluster", "setslot", slot, "node", dst.ID).Err(), "SETSLOT NODE on the target")
	must(tb, sc.Do(ctx, "cluster", "setslot", slot, "node", dst.ID).Err(), "SETSLOT NODE on the source")
}

// slotClients connects to src and dst without retries.
func slotClients(src, dst *Node) (sc, dc *redis.Client) {
	return redis.NewClient(&redis.Options{Addr: src.Addr, TLSConfig: src.tls, MaxRetries: -1}),
		redis.NewClient(&redis.Options{Addr: dst.Addr, TLSConfig: dst.tls, MaxRetries: -1})
}

// NewID gives prefix, a dash and 12 random hex digits: an id (of a
// holder, an instruction) no other test uses.
func NewID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// HolderOn makes a holder id (NewID(prefix)) whose slot the master at addr
// owns and no slot of avoid is. It fails tb if the slot map cannot be read.
func (c *Cluster) HolderOn(ctx context.Context, tb TB, prefix, addr string, avoid map[int]bool) string {
	tb.Helper()
	for {
		h := NewID(prefix)
		slot := cluster.HolderSlot(h)
		if avoid[slot] {
			continue
		}
		m, err := c.MasterOf(ctx, slot)
		must(tb, err, "master of a slot")
		if m == addr {
			return h
		}
	}
}

// ProcessID asks the server at addr (plain TCP) for its process id, so that
// a test can stop it (SIGSTOP) and let it run again. It fails tb on error.
func ProcessID(tb TB, addr string) int {
	tb.Helper()
	pid, err := serverPID(context.Background(), addr, nil)
	must(tb, err, "process id of "+addr)
	return pid
}

// must fails tb with what when err is not nil.
func must(tb TB, err error, what string) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}
