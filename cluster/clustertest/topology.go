package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// member is a node as another node sees it.
type member struct {
	ID   string
	Addr string
}

// shard is a master that serves slots, with its replicas, as one node sees it.
type shard struct {
	Slots    [][2]int // inclusive ranges, ascending
	Master   member
	Replicas []member // ordered by address
}

func (s *shard) has(slot int) bool {
	for _, r := range s.Slots {
		if r[0] <= slot && slot <= r[1] {
			return true
		}
	}
	return false
}

// topology is the slot map of the cluster as one node sees it: the shards
// that serve at least one slot, ordered by their first slot. A master that
// lost its slots to a failover is left out until it comes back as a replica.
type topology []shard

// readTopology asks the server behind rdb for its slot map: CLUSTER SHARDS,
// or CLUSTER SLOTS on a server older than 7.0.
func readTopology(ctx context.Context, rdb *redis.Client) (topology, error) {
	shards, err := rdb.ClusterShards(ctx).Result()
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return readSlots(ctx, rdb)
	}
	if err != nil {
		return nil, err
	}
	var t topology
	for _, cs := range shards {
		if len(cs.Slots) == 0 {
			continue
		}
		var s shard
		for _, r := range cs.Slots {
			s.Slots = append(s.Slots, [2]int{int(r.Start), int(r.End)})
		}
		for _, n := range cs.Nodes {
			host := n.IP
			if host == "" {
				host = n.Endpoint
			}
			m := member{ID: n.ID, Addr: net.JoinHostPort(host, strconv.FormatInt(n.Port, 10))}
			if n.Role == "master" {
				s.Master = m
			} else {
				s.Replicas = append(s.Replicas, m)
			}
		}
		t = append(t, s)
	}
	return t.normalize(), nil
}

func readSlots(ctx context.Context, rdb *redis.Client) (topology, error) {
	slots, err := rdb.ClusterSlots(ctx).Result() //nolint:staticcheck // the fallback for servers without CLUSTER SHARDS
	if err != nil {
		return nil, err
	}
	index := map[string]int{} // master address -> position in t
	var t topology
	for _, cs := range slots {
		if len(cs.Nodes) == 0 {
			continue
		}
		i, ok := index[cs.Nodes[0].Addr]
		if !ok {
			s := shard{Master: member{ID: cs.Nodes[0].ID, Addr: cs.Nodes[0].Addr}}
			for _, r := range cs.Nodes[1:] {
				s.Replicas = append(s.Replicas, member{ID: r.ID, Addr: r.Addr})
			}
			i = len(t)
			index[s.Master.Addr] = i
			t = append(t, s)
		}
		t[i].Slots = append(t[i].Slots, [2]int{cs.Start, cs.End})
	}
	return t.normalize(), nil
}

func (t topology) normalize() topology {
	for i := range t {
		slices.SortFunc(t[i].Slots, func(a, b [2]int) int { return a[0] - b[0] })
		slices.SortFunc(t[i].Replicas, func(a, b member) int { return strings.Compare(a.Addr, b.Addr) })
	}
	slices.SortFunc(t, func(a, b shard) int { return a.Slots[0][0] - b.Slots[0][0] })
	return t
}

// String renders the map in a canonical form, so that two nodes agree when
// their strings are equal.
func (t topology) String() string {
	var b strings.Builder
	for i, s := range t {
		if i > 0 {
			b.WriteString("; ")
		}
		for j, r := range s.Slots {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d-%d", r[0], r[1])
		}
		fmt.Fprintf(&b, " %s %s [", s.Master.Addr, s.Master.ID)
		for j, r := range s.Replicas {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s %s", r.Addr, r.ID)
		}
		b.WriteByte(']')
	}
	return b.String()
}

// covered returns the number of slots that have a master.
func (t topology) covered() int {
	n := 0
	for _, s := range t {
		for _, r := range s.Slots {
			n += r[1] - r[0] + 1
		}
	}
	return n
}

// shardOf returns the shard serving slot, or nil.
func (t topology) shardOf(slot int) *shard {
	for i := range t {
		if t[i].has(slot) {
			return &t[i]
		}
	}
	return nil
}

// shardOfMaster returns the shard whose master is addr, or nil.
func (t topology) shardOfMaster(addr string) *shard {
	for i := range t {
		if t[i].Master.Addr == addr {
			return &t[i]
		}
	}
	return nil
}

// role returns "master", "replica" or "" (not in the map) for addr.
func (t topology) role(addr string) string {
	for _, s := range t {
		if s.Master.Addr == addr {
			return "master"
		}
		for _, r := range s.Replicas {
			if r.Addr == addr {
				return "replica"
			}
		}
	}
	return ""
}
