package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/internal/bench"
)

// TestBench_TransferPartReportsItsLineAndKeepsTheOthers runs the transfer
// part alone, quick, on the package's cluster: the JSON keeps every part's
// object and gains "transfer" with its figures; the table has its line.
func TestBench_TransferPartReportsItsLineAndKeepsTheOthers(t *testing.T) {
	needRedis(t)
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--quick", "--parts", "transfer", "--transfer-duration", "300ms", "--load-rounds", "1", "--json",
		"--redis", strings.Join(testCluster.Addrs(), ",")},
		cli{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
	require.Equal(t, exitOK, code, errb.String())

	var rep map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	for _, k := range []string{"script_cost", "pipeline", "concurrent", "http", "contention", "memory", "relay", "transfer", "machine", "targets"} {
		assert.Contains(t, rep, k)
	}
	var tr map[string]any
	require.NoError(t, json.Unmarshal(rep["transfer"], &tr))
	for _, k := range []string{"per_sec", "single_per_sec", "ratio", "p50_ms", "p99_ms", "aborted"} {
		assert.Contains(t, tr, k)
	}
	assert.Equal(t, 0.0, tr["aborted"])
	assert.NotContains(t, tr, "skipped")
	assert.Contains(t, errb.String(), "two-part trades/s")
}

func TestBench_QuickKeepsAGivenTransferDuration(t *testing.T) {
	s := mergeSettings(bench.Quick(), bench.Settings{TransferDur: 5 * time.Second})
	assert.Equal(t, 5*time.Second, s.TransferDur)
	assert.Equal(t, bench.Quick().Workers, s.Workers)
}
