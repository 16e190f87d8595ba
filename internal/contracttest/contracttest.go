// Package contracttest reads testdata/conformance3/cases.json, the rules of
// DESIGN.md written once as cases that the engine's, the JSON door's and the
// daemon's tests each run through their own door, and gives them what they
// share: the text of each instruction and the comparison of a state with the
// part of it a case wants. Tests alone import it.
package contracttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// The doors a case runs through.
const (
	DoorEngine = "engine" // engine.Engine.Apply
	DoorJSON   = "json"   // FCALL apply_json
	DoorHTTP   = "http"   // POST /v1/instructions
)

// Expired is the expiry, in ms, that a case's holder's hold h-exp and
// coupon c-hexp are given in its hash: long past.
const Expired = 1000

// The hold and the coupon that Expire makes expired.
const (
	ExpiredHold   = "h-exp"
	ExpiredCoupon = "c-hexp"
)

// Expire makes holder's hold h-exp and coupon c-hexp expired in its hash
// alone (its expiry index entry is the caller's to change or keep).
func Expire(t *testing.T, rdb redis.Cmdable, holder string) {
	t.Helper()
	ctx := context.Background()
	key := cluster.Holder(holder)
	hold, err := rdb.HGet(ctx, key, "h:"+ExpiredHold).Result()
	require.NoError(t, err)
	_, rest, _ := strings.Cut(hold, "|")
	exp := strconv.Itoa(Expired)
	require.NoError(t, rdb.HSet(ctx, key, "h:"+ExpiredHold, exp+"|"+rest,
		"c:"+ExpiredCoupon, "held:"+ExpiredHold+"|"+exp).Err())
}

// Case is one rule: see the file's "about".
type Case struct {
	Name      string
	Suspend   bool
	Unopened  bool
	Top       map[string]any
	MemoBytes int `json:"memo_bytes"`
	Repeat    int
	Ops       []map[string]any
	Code      string
	OpIndex   *int `json:"op_index"`
	Doors     []string
	Want      map[string]any
	Result    map[string]any
}

// File is the whole fixture.
type File struct {
	About string
	Setup []map[string]any
	Cases []Case
}

// Load reads a fixture (a File, from testdata/conformance3/cases.json, or a
// TransferFile, from transfers.json), strictly, its numbers as json.Number.
func Load[F interface{ count() int }](t *testing.T, path string) F {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var f F
	require.NoError(t, dec.Decode(&f), "%s", path)
	require.NotZero(t, f.count(), "%s has no case", path)
	return f
}

func (f File) count() int         { return len(f.Cases) }
func (f TransferFile) count() int { return len(f.Cases) }

// Runs tells whether the case runs through door.
func (c Case) Runs(door string) bool {
	if len(c.Doors) == 0 {
		return true
	}
	for _, d := range c.Doors {
		if d == door {
			return true
		}
	}
	return false
}

// ID is the instruction id the case sends: its own, or id.
func (c Case) ID(id string) string {
	if v, ok := c.Top["id"].(string); ok {
		return v
	}
	return id
}

// Validation tells whether the case's code is one the engine finds before
// Redis: such a rejection is never recorded.
func (c Case) Validation() bool {
	switch instructions.Code(c.Code) {
	case instructions.CodeInvalidInstruction, instructions.CodeInvalidAmount, instructions.CodeInvalidID,
		instructions.CodeUnknownAsset, instructions.CodeTooManyOps:
		return true
	}
	return false
}

// Recorded tells whether the case's rejection is kept under its id: a
// script's, for a holder that exists.
func (c Case) Recorded() bool { return c.Code != "" && !c.Validation() && !c.Unopened }

// Text is the case's instruction for holder under id (unless the case names
// its own); minor writes each amount in minor units, as the JSON door takes
// them.
func (c Case) Text(t *testing.T, holder, id string, minor bool) []byte {
	t.Helper()
	in := map[string]any{"id": id, "holder": holder}
	if c.MemoBytes > 0 {
		in["memo"] = strings.Repeat("m", c.MemoBytes)
	}
	for k, v := range c.Top {
		in[k] = v
	}
	ops := []map[string]any{}
	for n := max(c.Repeat, 1); n > 0; n-- {
		ops = append(ops, c.Ops...)
	}
	if _, given := c.Top["ops"]; given {
		return marshal(t, in) // ops of another shape than a list of ops
	}
	in["ops"] = ops
	if minor {
		in["ops"] = MinorUnits(t, ops)
	}
	return marshal(t, in)
}

// OtherText is the case's instruction under the same id with another body
// (another memo), which the contract answers IDEMPOTENCY_CONFLICT once the
// id has an answer.
func (c Case) OtherText(t *testing.T, holder, id string, minor bool) []byte {
	t.Helper()
	top := map[string]any{"memo": "another body"}
	for k, v := range c.Top {
		if k != "memo" {
			top[k] = v
		}
	}
	c.Top, c.MemoBytes = top, 0
	return c.Text(t, holder, id, minor)
}

// SetupText is the instruction that opens a case's holder with the
// fixture's setup, then extra.
func (f File) SetupText(t *testing.T, holder, id string, minor bool, extra []map[string]any) []byte {
	t.Helper()
	ops := append(append([]map[string]any{{"op": "open"}}, f.Setup...), extra...)
	if minor {
		ops = MinorUnits(t, ops)
	}
	return marshal(t, map[string]any{"id": id, "holder": holder, "ops": ops})
}

// MinorUnits gives ops with each decimal amount of a known asset (or of
// points) in minor units; any other amount stays as it is, for the door to
// judge.
func MinorUnits(t *testing.T, ops []map[string]any) []map[string]any {
	t.Helper()
	reg := instructions.MustParseAssets(instructions.DefaultAssets)
	out := make([]map[string]any, len(ops))
	for i, op := range ops {
		o := map[string]any{}
		for k, v := range op {
			o[k] = v
		}
		amount, isText := o["amount"].(string)
		asset, _ := o["leg"].(string)
		if asset == "" {
			asset, _ = o["asset"].(string)
		}
		if asset == "" {
			asset = instructions.PointsLeg
		}
		if scale, known := reg.Scale(asset); isText && known {
			if units, ok := instructions.ToUnits(amount, scale); ok {
				o["amount"] = fmt.Sprint(units)
			}
		}
		out[i] = o
	}
	return out
}

// TransferCase is one rule of transfers: see transfers.json's "about".
type TransferCase struct {
	Name      string
	Setup     map[string][]map[string]any
	Suspend   []string
	Parts     []TransferPart
	Status    string
	Code      string
	PartIndex *int `json:"part_index"`
	OpIndex   *int `json:"op_index"`
	Want      map[string]map[string]any
}

// TransferPart is a part of a TransferCase, its holder named by the case.
type TransferPart struct {
	Holder string
	Ops    []map[string]any
}

// TransferFile is the whole fixture of transfers.
type TransferFile struct {
	About string
	Cases []TransferCase
}

// The holders of a TransferCase: Holders are opened, Ghost never is.
var (
	Holders = []string{"a", "b", "c"}
	Ghost   = "ghost"
)

// Suspended tells whether the case suspends holder name.
func (c TransferCase) Suspended(name string) bool {
	for _, s := range c.Suspend {
		if s == name {
			return true
		}
	}
	return false
}

// Text is the case's transfer under id, its holders' names replaced by
// holders'.
func (c TransferCase) Text(t *testing.T, id string, holders map[string]string) []byte {
	t.Helper()
	parts := make([]map[string]any, len(c.Parts))
	for i, p := range c.Parts {
		h, ok := holders[p.Holder]
		require.True(t, ok, "holder %q", p.Holder)
		parts[i] = map[string]any{"holder": h, "ops": p.Ops}
	}
	return marshal(t, map[string]any{"id": id, "parts": parts})
}

// Check checks a transfer's answer against the case: its status, complete,
// replayed as given, and for an abort its error's code, part and op.
func (c TransferCase) Check(t *testing.T, st engine.TransferState, replayed bool) {
	t.Helper()
	assert.Equal(t, c.Status, st.Status)
	assert.True(t, st.Complete, "complete")
	assert.Equal(t, replayed, st.Replayed, "replayed")
	if c.Code == "" {
		assert.Nil(t, st.Error)
		return
	}
	require.NotNil(t, st.Error)
	assert.Equal(t, c.Code, string(st.Error.Code), "%v", st.Error)
	assert.Equal(t, c.PartIndex, st.PartIndex, "part index")
	require.NotNil(t, c.OpIndex)
	assert.Equal(t, *c.OpIndex, st.Error.OpIndex, "op index")
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// Decode reads JSON with its numbers as json.Number, as the fixture's are.
func Decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "%s", raw)
	return m
}

// Contains checks that got (JSON) holds every field of want with its value:
// null, that the field is absent; an object, the same check one level down
// (an empty object wants an empty one); anything else, equal.
func Contains(t *testing.T, want map[string]any, got []byte) {
	t.Helper()
	contains(t, "", want, Decode(t, got))
}

func contains(t *testing.T, path string, want, got map[string]any) {
	t.Helper()
	if len(want) == 0 {
		assert.Empty(t, got, "%s: want it empty", path)
	}
	for k, w := range want {
		g, present := got[k]
		switch w := w.(type) {
		case nil:
			assert.False(t, present, "%s.%s: want it absent, got %v", path, k, g)
		case map[string]any:
			gm, ok := g.(map[string]any)
			if assert.True(t, ok, "%s.%s: want an object, got %v", path, k, g) {
				contains(t, path+"."+k, w, gm)
			}
		default:
			assert.Equal(t, w, g, "%s.%s", path, k)
		}
	}
}
