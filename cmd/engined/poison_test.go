package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/reconcile"
	"github.com/atomledger/atomledger/stored"
)

// TestRelay_PoisonEventStallsOnlyItsHolder writes an event PostgreSQL
// refuses (a memo holding U+0000) straight into the outbox of holder A, as
// the event of A's next instruction, while the daemon's relay runs and other
// holders' instructions are applied, and A's later instructions chain on it.
// The other holders reach the ledger and reconcile finds them in sync; A's
// event is set aside with its reason and its exact fields, removed from the
// outbox, A's later events wait behind it (parked), and reconcile (exit 1,
// the event and its reason) and /metrics show it.
func TestRelay_PoisonEventStallsOnlyItsHolder(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	r := newLedgerRig(t)
	token := newID("token")
	d, addr := listenOnFreeAddr(t, "", nil, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--redis", strings.Join(r.c.Addrs(), ","), "--tokens", token, "--pg", r.dsn}
	})
	d.url, d.token = "http://"+addr, token
	d.waitHealthy(t)

	a := newID("poisoned")
	others := make([]string, 30)
	for i := range others {
		others[i] = newID("h")
	}
	credit := func(hs []string) []instructions.Instruction {
		var ins []instructions.Instruction
		for _, h := range hs {
			ins = append(ins, instructions.New(newID("c"), h).Credit("CNY", "1.00"))
		}
		return ins
	}
	all := append([]string{a}, others...)
	var opens []instructions.Instruction
	for _, h := range all {
		opens = append(opens, instructions.New(newID("o"), h).Open().Credit("CNY", "100.00"))
	}
	require.Equal(t, len(all), r.applyAll(t, opens))

	// A's next event, well formed and chained on A's digest, but with a memo
	// PostgreSQL cannot store; Redis's head of A moves to it, as the script
	// would have moved it.
	meta := cluster.Holder(a)
	head, err := r.rdb.HMGet(ctx, meta, stored.FieldSeq, stored.FieldDigest).Result()
	require.NoError(t, err)
	seq, err := strconv.ParseInt(head[0].(string), 10, 64)
	require.NoError(t, err)
	ev := stored.Event{Holder: a, Seq: seq + 1, ID: "poison-1", FP: strings.Repeat("0", 32), TS: time.Now().UnixMilli(),
		CP: "external", Ops: "[]", State: fmt.Sprintf(`{"s":"%d","b":{},"c":{},"h":{}}`, seq+1), Memo: "poison\x00x", DV: stored.DigestV2}
	ev.Digest = stored.Digest(head[1].(string), ev)
	poison := ev.Fields()
	outbox := cluster.Outbox(cluster.HolderSlot(a))
	entry, err := r.rdb.XAdd(ctx, &redis.XAddArgs{Stream: outbox, Values: poison}).Result()
	require.NoError(t, err)
	require.NoError(t, r.rdb.HSet(ctx, meta, stored.FieldSeq, seq+1, stored.FieldDigest, ev.Digest).Err())

	// Everyone goes on, A included: A's three are chained on the poison.
	for range 3 {
		require.Equal(t, len(all), r.applyAll(t, credit(all)))
	}

	// The others reach the ledger, A's event is set aside, its later ones park.
	var rep *reconcile.Report
	deadline := time.Now().Add(3 * time.Minute)
	for {
		rep, err = reconcile.Run(ctx, r.eng, r.led, nil)
		require.NoError(t, err)
		if (rep.InSync == len(others) && len(rep.SetAside) == 1 && rep.Parked == 3) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	assert.Equal(t, len(others), rep.InSync, "every other holder is in the ledger, in sync: %+v", rep.Findings)
	if assert.Len(t, rep.Findings, 1) {
		assert.Equal(t, a, rep.Findings[0].Holder, "only A is behind")
		assert.Equal(t, seq, rep.Findings[0].LedgerSeq, "A's ledger stops before the event set aside")
		assert.Equal(t, seq+4, rep.Findings[0].RedisSeq)
	}
	assert.Empty(t, rep.Unbalanced)
	assert.Empty(t, rep.AccountDrift)
	assert.Equal(t, int64(3), rep.Parked, "A's later events wait behind it")
	require.Len(t, rep.SetAside, 1)
	sa := rep.SetAside[0]
	assert.Equal(t, a, sa.Holder)
	assert.Equal(t, seq+1, sa.Seq)
	assert.Equal(t, outbox, sa.Stream)
	assert.Equal(t, entry, sa.Entry)
	assert.Contains(t, sa.Reason, "PostgreSQL refused it")
	assert.Contains(t, sa.Reason, "0x00")
	assert.True(t, rep.Drift)

	var raw []byte
	require.NoError(t, r.led.Pool().QueryRow(ctx, "SELECT fields FROM ledger.set_aside WHERE id = $1", sa.ID).Scan(&raw))
	var kept map[string]string
	require.NoError(t, json.Unmarshal(raw, &kept))
	assert.Equal(t, poison, kept, "the event's fields are kept exactly, U+0000 included")

	// Removed from the outbox once recorded, as is everything else.
	for time.Now().Before(deadline) {
		if n, err := r.rdb.XLen(ctx, outbox).Result(); err == nil && n == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	n, err := r.rdb.XLen(ctx, outbox).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the poison event left the outbox, and nothing waits behind it there")

	t.Run("engined reconcile lists it with its reason and exits 1", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "report.json")
		code, stdout, stderr := r.run("reconcile", "--out", out)
		assert.Equal(t, exitDrift, code, "stderr: %s", stderr)
		assert.Contains(t, stdout, fmt.Sprintf("set aside: holder %s seq %d (entry %s", a, seq+1, entry))
		assert.Contains(t, stdout, "0x00")
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		var got reconcile.Report
		require.NoError(t, json.Unmarshal(data, &got))
		require.Len(t, got.SetAside, 1)
		assert.Equal(t, sa.Reason, got.SetAside[0].Reason)
	})

	t.Run("GET /metrics shows it", func(t *testing.T) {
		m := d.doWith(t, http.MethodGet, "/metrics", "", nil)
		require.Equal(t, http.StatusOK, m.status)
		assert.Contains(t, string(m.body), "\natomledger_ledger_set_aside 1\n")
		assert.Contains(t, string(m.body), "\natomledger_ledger_set_aside_total 1\n")
	})

	// The repair of docs/ledger.md: the event as read fails again; corrected,
	// it needs a note; with one, it and the three behind it apply.
	id := strconv.FormatInt(sa.ID, 10)
	t.Run("engined repair: as read, PostgreSQL refuses it again and nothing changes", func(t *testing.T) {
		code, _, stderr := r.run("repair", "--set-aside", id)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "0x00")
		open, err := r.led.SetAsideCount(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), open)
	})
	t.Run("engined repair --all: as read, it is listed as not repaired", func(t *testing.T) {
		code, stdout, stderr := r.run("repair", "--all")
		assert.Equal(t, exitDrift, code)
		assert.Contains(t, stderr, fmt.Sprintf("set aside %d (holder %s seq %d) not repaired", sa.ID, a, seq+1))
		assert.Contains(t, stdout, "repaired 0 of 1")
	})
	fixed := maps.Clone(kept)
	fixed["memo"] = strings.ReplaceAll(fixed["memo"], "\x00", "\uFFFD")
	data, err := json.Marshal(fixed)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "fixed.json")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	t.Run("engined repair: a corrected event needs a note", func(t *testing.T) {
		code, _, stderr := r.run("repair", "--set-aside", id, "--fields", file)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "give a note")
	})
	t.Run("engined repair: corrected, with a note, it applies with the events behind it", func(t *testing.T) {
		code, stdout, stderr := r.run("repair", "--set-aside", id, "--fields", file, "--note", "memo: U+0000 replaced by U+FFFD")
		require.Equal(t, exitOK, code, "stderr: %s", stderr)
		assert.Contains(t, stdout, "applied 4 (the event and 3 parked behind it)")
		rep, err := reconcile.Run(ctx, r.eng, r.led, nil)
		require.NoError(t, err)
		assert.False(t, rep.Drift, "%+v", rep)
		assert.Equal(t, len(all), rep.InSync, "A too: the ledger has A's whole history, its digest Redis's")
		assert.Empty(t, rep.SetAside)
		assert.Zero(t, rep.Parked)
		var resolution string
		require.NoError(t, r.led.Pool().QueryRow(ctx, "SELECT resolution FROM ledger.set_aside WHERE id = $1", sa.ID).Scan(&resolution))
		assert.Equal(t, "memo: U+0000 replaced by U+FFFD", resolution, "the row keeps why the ledger's event differs")
		m := d.doWith(t, http.MethodGet, "/metrics", "", nil)
		assert.Contains(t, string(m.body), "\natomledger_ledger_set_aside 0\n")
	})
}
