package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

// The sentences of docs/json-door.md, each checked as it is written.

// fcallJSONArgs sends text and the further arguments args to the JSON door
// and gives the outcome.
func fcallJSONArgs(t *testing.T, holder, id, text string, args ...any) string {
	t.Helper()
	v, err := rdb.FCall(context.Background(), lua.FuncApplyJSON, jsonKeys(holder, id), append([]any{text}, args...)...).Slice()
	require.NoError(t, err)
	require.Len(t, v, 2)
	s, _ := v[1].(string)
	return s
}

// refusedUnwritten checks that outcome is a refusal with code and that
// nothing was written: the holder's hash as before, no record of id.
func refusedUnwritten(t *testing.T, code instructions.Code, outcome, holder, id string, before map[string]string) {
	t.Helper()
	assert.Equal(t, string(code), cliCode(outcome), "%q", outcome)
	assert.Equal(t, before, holderHash(t, holder), "the holder changed")
	n, err := rdb.Exists(context.Background(), cluster.Tx(holder, id)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "a refusal before the script's checks is not recorded")
}

// "another text under that id, even one that differs only in spacing, is
// IDEMPOTENCY_CONFLICT, and so is the same id sent once through each door";
// the holder unchanged each time.
func TestJSONDoorClaims_SpacingAndTheOtherDoorAreOtherTexts(t *testing.T) {
	needRedis(t)
	require.NoError(t, eng.Load(context.Background()))
	h := newHolder(t, tenCNY)
	earn := func(id, spacing string) string {
		return `{"id":"` + id + `","holder":"` + h + `",` + spacing + `"ops":[{"op":"earn_points","amount":"1"}]}`
	}

	t.Run("spacing only", func(t *testing.T) {
		id := newID("sp")
		require.Equal(t, "", cliCode(fcallJSON(t, h, id, earn(id, ""))))
		before := holderHash(t, h)
		assert.Equal(t, "IDEMPOTENCY_CONFLICT", cliCode(fcallJSON(t, h, id, earn(id, " "))))
		assert.Equal(t, before, holderHash(t, h))
		assert.Equal(t, "", cliCode(fcallJSON(t, h, id, earn(id, ""))), "the first text still replays")
		assert.Equal(t, before, holderHash(t, h))
	})
	t.Run("the engine's door first", func(t *testing.T) {
		id := newID("eng")
		_, err := eng.Apply(context.Background(), instructions.New(id, h).EarnPoints("1"))
		require.NoError(t, err)
		before := holderHash(t, h)
		assert.Equal(t, "IDEMPOTENCY_CONFLICT", cliCode(fcallJSON(t, h, id, earn(id, ""))))
		assert.Equal(t, before, holderHash(t, h))
	})
	t.Run("the JSON door first", func(t *testing.T) {
		id := newID("json")
		require.Equal(t, "", cliCode(fcallJSON(t, h, id, earn(id, ""))))
		before := holderHash(t, h)
		_, err := eng.Apply(context.Background(), instructions.New(id, h).EarnPoints("1"))
		assert.ErrorIs(t, err, engine.ErrIdempotencyConflict)
		assert.Equal(t, before, holderHash(t, h))
	})
}

// "over 64 KiB" is INVALID_INSTRUCTION, 64 KiB itself taken; "an amount's
// leading zeros are taken (at most 40 digits in all)"; the optional second
// argument, "how long the id is remembered, in ms": a record of that life,
// and anything but a whole number of 1 ms or more refused with nothing
// written, as is a third argument.
func TestJSONDoorClaims_SizeDigitsAndTheTTLArgument(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	h := newHolder(t, tenCNY)
	// padded is an instruction of exactly size bytes, spaces after its brace.
	padded := func(id string, size int) string {
		body := `"id":"` + id + `","holder":"` + h + `","ops":[{"op":"earn_points","amount":"1"}]}`
		return "{" + strings.Repeat(" ", size-1-len(body)) + body
	}
	t.Run("64 KiB", func(t *testing.T) {
		id := newID("big")
		before := holderHash(t, h)
		refusedUnwritten(t, instructions.CodeInvalidInstruction, fcallJSON(t, h, id, padded(id, 64<<10+1)), h, id, before)
		require.Equal(t, "", cliCode(fcallJSON(t, h, id, padded(id, 64<<10))), "64 KiB itself is taken")
	})
	t.Run("40 digits", func(t *testing.T) {
		id := newID("digits")
		points := func(amount string) string {
			return `{"id":"` + id + `","holder":"` + h + `","ops":[{"op":"earn_points","amount":"` + amount + `"}]}`
		}
		before := holderHash(t, h)
		had, err := strconv.ParseInt(state(t, h).Points.Available, 10, 64)
		require.NoError(t, err)
		refusedUnwritten(t, instructions.CodeInvalidAmount, fcallJSON(t, h, id, points(strings.Repeat("0", 40)+"7")), h, id, before)
		require.Equal(t, "", cliCode(fcallJSON(t, h, id, points(strings.Repeat("0", 39)+"7"))))
		assert.Equal(t, strconv.FormatInt(had+7, 10), state(t, h).Points.Available, "40 digits, leading zeros taken")
	})
	t.Run("the TTL argument", func(t *testing.T) {
		text := func(id string) string {
			return `{"id":"` + id + `","holder":"` + h + `","ops":[{"op":"earn_points","amount":"1"}]}`
		}
		for _, ttl := range []string{"0", "-1", "1.5", "abc", "", " 5000", "1e3", "1000000000000000"} {
			id := newID("ttl")
			before := holderHash(t, h)
			refusedUnwritten(t, instructions.CodeInvalidInstruction, fcallJSONArgs(t, h, id, text(id), ttl), h, id, before)
		}
		id := newID("three")
		before := holderHash(t, h)
		refusedUnwritten(t, instructions.CodeInvalidInstruction, fcallJSONArgs(t, h, id, text(id), "5000", "5000"), h, id, before)

		id = newID("ttl")
		require.Equal(t, "", cliCode(fcallJSONArgs(t, h, id, text(id), "600000")))
		ttl, err := rdb.PTTL(ctx, cluster.Tx(h, id)).Result()
		require.NoError(t, err)
		assert.True(t, ttl > 0 && ttl <= 10*time.Minute, "the record lives the 600000 ms asked: %v", ttl)
		id = newID("default")
		require.Equal(t, "", cliCode(fcallJSON(t, h, id, text(id))))
		ttl, err = rdb.PTTL(ctx, cluster.Tx(h, id)).Result()
		require.NoError(t, err)
		assert.True(t, ttl > 23*time.Hour && ttl <= 24*time.Hour, "by default 24 h: %v", ttl)
	})
}
