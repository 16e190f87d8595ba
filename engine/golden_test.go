package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// The golden fixtures live at the module root, in testdata/<case>/:
//
//   - in.json: a JSON array of instructions in the wire format, applied in order;
//   - want.json: one entry per instruction, the Result or {"error": {...}};
//   - state.json (optional): the holder's whole state after the last instruction.
//
// The holder id is written "$H": each run replaces it with a fresh holder, so a
// fixture opens its own holder and never meets the state of another run, and
// puts "$H" back in the answers. Expiry times depend on the server clock: a
// non-zero expires_ms is compared as "<set>".
//
// go test ./engine -run TestGolden -update rewrites want.json, and state.json
// where the case has one (to give a case a state.json, create the file empty
// and run -update). Read every rewritten file against DESIGN.md before
// committing it: a golden file blesses whatever the engine answered.
var updateGolden = flag.Bool("update", false, "rewrite testdata/*/want.json and state.json from the engine's answers")

const (
	goldenDir    = "../testdata"
	goldenHolder = "$H"
)

func TestGolden(t *testing.T) {
	needRedis(t)
	ins, err := filepath.Glob(filepath.Join(goldenDir, "*", "in.json"))
	require.NoError(t, err)
	require.NotEmpty(t, ins, "no fixtures under %s", goldenDir)
	for _, in := range ins {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			runGolden(t, dir)
		})
	}
}

func runGolden(t *testing.T, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	h := newID("golden")
	// The fixture opens the holder itself, so newHolder's cleanup is not there.
	t.Cleanup(func() { checkInvariants(t, h) })

	raw, err := os.ReadFile(filepath.Join(dir, "in.json"))
	require.NoError(t, err)
	// Ids cannot contain '$', so the placeholder cannot clash with anything else.
	raw = bytes.ReplaceAll(raw, []byte(goldenHolder), []byte(h))
	var steps []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &steps), "in.json must be a JSON array of instructions")
	require.NotEmpty(t, steps, "in.json has no instruction")

	got := make([]json.RawMessage, len(steps))
	for i, step := range steps {
		got[i] = goldenNormalize(t, h, goldenOutcome(ctx, t, step))
	}

	var gotState json.RawMessage
	statePath := filepath.Join(dir, "state.json")
	_, statErr := os.Stat(statePath)
	hasState := statErr == nil
	if hasState {
		st, err := eng.State(ctx, h)
		if err != nil {
			gotState = goldenNormalize(t, h, goldenError(t, err))
		} else {
			gotState = goldenNormalize(t, h, st)
		}
	}

	wantPath := filepath.Join(dir, "want.json")
	if *updateGolden {
		writeGolden(t, wantPath, got)
		if hasState {
			writeGolden(t, statePath, gotState)
		}
		return
	}

	wantRaw, err := os.ReadFile(wantPath)
	require.NoError(t, err, "run with -update to create it")
	var want []json.RawMessage
	require.NoError(t, json.Unmarshal(wantRaw, &want), "want.json must be a JSON array")
	if !assert.Len(t, got, len(want), "want.json needs one entry per instruction of in.json") {
		return
	}
	for i := range want {
		assert.JSONEq(t, string(want[i]), string(got[i]), "instruction %d: %s", i,
			bytes.ReplaceAll(steps[i], []byte(h), []byte(goldenHolder)))
	}
	if hasState {
		wantState, err := os.ReadFile(statePath)
		require.NoError(t, err)
		assert.JSONEq(t, string(wantState), string(gotState), "state after the last instruction")
	}
}

// goldenOutcome decodes one instruction, as the daemon would, and applies it:
// the Result, or {"error": ...} for a rejection by the codec, the validation
// or the script.
func goldenOutcome(ctx context.Context, t *testing.T, step json.RawMessage) any {
	t.Helper()
	in, err := instructions.Decode(step)
	if err != nil {
		return goldenError(t, err)
	}
	res, err := eng.Apply(ctx, in)
	if err != nil {
		return goldenError(t, err)
	}
	return res
}

func goldenError(t *testing.T, err error) any {
	t.Helper()
	var e *instructions.Error
	require.True(t, errors.As(err, &e), "want an *instructions.Error, got %T: %v", err, err)
	// UNAVAILABLE and INTERNAL are not outcomes a fixture can pin down.
	require.NotContains(t, []instructions.Code{instructions.CodeUnavailable, instructions.CodeInternal}, e.Code, "%v", err)
	return map[string]any{"error": e}
}

// goldenNormalize gives v as JSON with the holder written "$H", every
// non-zero expires_ms written "<set>", keys sorted, indented by two spaces.
func goldenNormalize(t *testing.T, holder string, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	b = bytes.ReplaceAll(b, []byte(holder), []byte(goldenHolder))
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	require.NoError(t, dec.Decode(&tree))
	return goldenJSON(t, maskExpiry(tree))
}

// goldenJSON is json.MarshalIndent without the HTML escapes, so that "<set>"
// reads as written.
func goldenJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func maskExpiry(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if n, ok := x.(json.Number); ok && k == "expires_ms" && n.String() != "0" {
				v[k] = "<set>"
				continue
			}
			v[k] = maskExpiry(x)
		}
	case []any:
		for i, x := range v {
			v[i] = maskExpiry(x)
		}
	}
	return v
}

func writeGolden(t *testing.T, path string, v any) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, append(goldenJSON(t, v), '\n'), 0o644), "write %s", path)
}
