package engine_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
)

// loggedRecord is one record a logRecords handler kept.
type loggedRecord struct {
	level slog.Level
	msg   string
	attrs map[string]any
}

// logRecords is a slog.Handler that keeps every record, for tests that read
// what was logged by whom.
type logRecords struct {
	mu  sync.Mutex
	all []loggedRecord
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	rec := loggedRecord{level: r.Level, msg: r.Message, attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.Any()
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, rec)
	return nil
}

func (l *logRecords) records() []loggedRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedRecord(nil), l.all...)
}

// stuckOf reads the stuck parts l's ERROR records tell: those of transfer
// id, the records that tell them, and the parts of every transfer.
func stuckOf(l *logRecords, id string) (parts int, recs []loggedRecord, total int) {
	for _, rec := range l.records() {
		if rec.level != slog.LevelError || !strings.Contains(rec.msg, "unfinished") {
			continue
		}
		n := 1 // a record per part, unless it says how many
		if v, ok := rec.attrs["unfinished_parts"].(int64); ok {
			n = int(v)
		}
		total += n
		if rec.attrs["transfer"] == id {
			parts += n
			recs = append(recs, rec)
		}
	}
	return parts, recs, total
}

// recoverStuck runs one recovery pass over every slot's index and gives what
// it left stuck of transfer id: the parts, and the ERROR records that said
// so. The cluster is shared, and other tests' unfinished transfers are in
// the indexes too: the pass's Stuck counter must be the sum of every stuck
// record's parts, each transfer's own counted from its own records alone.
func recoverStuck(t *testing.T, id string) (parts int, recs []loggedRecord) {
	t.Helper()
	l := &logRecords{}
	e := engine.New(rdb, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: slog.New(l)})
	r := engine.NewRecovery(e, &engine.RecoveryOptions{Logger: quiet})
	require.NoError(t, r.Recover(context.Background()))
	parts, recs, total := stuckOf(l, id)
	assert.Equal(t, int64(total), r.Stats().Stuck, "the Stuck counter counts the parts the ERROR records name")
	return parts, recs
}

// forgetOnCleanup takes transfer id out of its slot's index of unfinished
// transfers when the test ends: one left for an operator would otherwise
// stay there for every later recovery pass of the package.
func forgetOnCleanup(t *testing.T, id string) {
	t.Cleanup(func() {
		_ = rdb.ZRem(context.Background(), cluster.Transfers(cluster.TransferSlot(id)), id).Err()
	})
}
