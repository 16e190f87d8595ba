package stored_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/stored"
)

// The expected digests are sha1 of the terms joined by newlines, computed
// apart from this package.
func TestDigest_XferOnlyInTransferParts(t *testing.T) {
	ordinary := stored.Event{Holder: "u1", Seq: 1, ID: "o", FP: "fp1", TS: 1700000000000, CP: "external",
		Ops: `[{"op":"open"}]`, State: `{"s":"1","st":"active"}`}
	part := stored.Event{Holder: "u1", Seq: 2, ID: "x:t-1:c", FP: "fp2", TS: 1700000000001, CP: "x:t-1",
		Ops: `[{"op":"check"}]`, State: `{"s":"2","st":"active"}`, Memo: "transfer t-1: commit", Xfer: "t-1"}

	t.Run("an ordinary event's digest is the one it had before transfers", func(t *testing.T) {
		assert.Equal(t, "5179bf6fd46ba8cf882002d416b5cbde087293ba", stored.Digest("", ordinary))
	})
	t.Run("a transfer part's digest ends with its xfer", func(t *testing.T) {
		assert.Equal(t, "72691f592c01200c470039d150e0e59fafe95df2", stored.Digest("d0", part))
		part.Xfer = ""
		assert.Equal(t, "367de19df3e9e3438436d153eec0216320798f15", stored.Digest("d0", part), "without it, the old rule")
	})
}

// Version 2: sha1 of "<byte length>:<bytes>" of every term, xfer always,
// computed apart from this package.
func TestDigest_Version2LengthPrefixesEveryTerm(t *testing.T) {
	ordinary := stored.Event{Holder: "u1", Seq: 1, ID: "o", FP: "fp1", TS: 1700000000000, CP: "external",
		Ops: `[{"op":"open"}]`, State: `{"s":"1","st":"active"}`, DV: stored.DigestV2}
	part := stored.Event{Holder: "u1", Seq: 2, ID: "x:t-1:c", FP: "fp2", TS: 1700000000001, CP: "x:t-1",
		Ops: `[{"op":"check"}]`, State: `{"s":"2","st":"active"}`, Memo: "transfer t-1: commit", Xfer: "t-1", DV: stored.DigestV2}
	assert.Equal(t, "8b1efc78c19585fa2d6ff2224d4a84e09ec5238d", stored.Digest("", ordinary))
	assert.Equal(t, "d93c072ba4a84c4fd92f1ad62d9d5a5da68fde42", stored.Digest("d0", part))

	// Under version 1 a memo "m\nt" and a memo "m" of transfer t gave the
	// same digest; under version 2 they do not.
	a, b := ordinary, ordinary
	a.Memo = "m\nt"
	b.Memo, b.Xfer = "m", "t"
	a.DV, b.DV = stored.DigestV1, stored.DigestV1
	require.Equal(t, stored.Digest("", a), stored.Digest("", b), "the ambiguity of version 1")
	a.DV, b.DV = stored.DigestV2, stored.DigestV2
	assert.NotEqual(t, stored.Digest("", a), stored.Digest("", b))
}

func TestParseEvent_Xfer(t *testing.T) {
	fields := func() map[string]string {
		return map[string]string{"holder": "u1", "seq": "2", "id": "x:t-1:p", "fp": "f", "ts": "1", "cp": "x:t-1",
			"ops": `[{"op":"take","asset":"USDT","units":"5","hold":"ord","to":"x:t-1"}]`, "state": `{"s":"2"}`,
			"digest": "d", "memo": "transfer t-1: prepare", "xfer": "t-1"}
	}
	t.Run("a part's event keeps its xfer, and gives it back", func(t *testing.T) {
		ev, err := stored.ParseEvent(fields())
		require.NoError(t, err)
		assert.Equal(t, "t-1", ev.Xfer)
		assert.Equal(t, "x:t-1", ev.ParsedOps()[0].To)
		assert.Equal(t, fields(), ev.Fields())
	})
	t.Run("an ordinary event has no xfer, and gets none back", func(t *testing.T) {
		f := fields()
		delete(f, "xfer")
		ev, err := stored.ParseEvent(f)
		require.NoError(t, err)
		assert.Empty(t, ev.Xfer)
		assert.NotContains(t, ev.Fields(), "xfer")
	})
	t.Run("an empty xfer is malformed", func(t *testing.T) {
		f := fields()
		f["xfer"] = ""
		_, err := stored.ParseEvent(f)
		assert.ErrorContains(t, err, "xfer")
	})
}

// Under version 1 a memo ending in "\n<id>" digests as a transfer's xfer: the
// pair below collides, so an entry's transfer could be cleared in the ledger
// without breaking the chain. Version 2 length-prefixes every term. The
// expected digests are computed apart from this package (sha1 of
// "<len>:<bytes>" per term, xfer always).
func TestDigest_V2TellsTheMemoFromTheTransfer(t *testing.T) {
	part := stored.Event{Holder: "u1", Seq: 2, ID: "x:t9:c", FP: "fp2", TS: 1700000000001, CP: "x:t9",
		Ops: `[{"op":"check"}]`, State: `{"s":"2","st":"active"}`, Memo: "transfer t9: commit", Xfer: "t9"}
	forged := part
	forged.Memo, forged.Xfer = "transfer t9: commit\nt9", ""

	t.Run("version 1 cannot tell them apart", func(t *testing.T) {
		assert.Equal(t, "424d7ae587a97576f60417265dfa2329e7d4a0fb", stored.Digest("d0", part))
		assert.Equal(t, stored.Digest("d0", part), stored.Digest("d0", forged))
	})
	t.Run("version 2 tells them apart", func(t *testing.T) {
		part.DV, forged.DV = stored.DigestV2, stored.DigestV2
		assert.Equal(t, "d8629cefe839e1c7668ad9dcba93a8e0ae685bc9", stored.Digest("d0", part))
		assert.Equal(t, "fb588ea98af9e0d10b55861593eecc4f55fcc850", stored.Digest("d0", forged))
	})
}

func TestParseEvent_DigestVersion(t *testing.T) {
	fields := func() map[string]string {
		return map[string]string{"holder": "u1", "seq": "1", "id": "o", "fp": "f", "ts": "1", "cp": "external",
			"ops": `[{"op":"open"}]`, "state": `{"s":"1"}`, "digest": "d", "memo": ""}
	}
	t.Run("an event without dv is version 1, and gets no dv back", func(t *testing.T) {
		ev, err := stored.ParseEvent(fields())
		require.NoError(t, err)
		assert.Equal(t, stored.DigestV1, ev.DV)
		assert.Equal(t, fields(), ev.Fields())
	})
	t.Run("dv 2 is version 2, and comes back", func(t *testing.T) {
		f := fields()
		f["dv"] = "2"
		ev, err := stored.ParseEvent(f)
		require.NoError(t, err)
		assert.Equal(t, stored.DigestV2, ev.DV)
		assert.Equal(t, f, ev.Fields())
	})
	t.Run("an empty xfer is no xfer under version 2", func(t *testing.T) {
		f := fields()
		f["dv"], f["xfer"] = "2", ""
		ev, err := stored.ParseEvent(f)
		require.NoError(t, err)
		assert.Empty(t, ev.Xfer)
	})
	for _, dv := range []string{"", "1", "3", "02", " 2"} {
		t.Run("dv "+strconv.Quote(dv)+" is malformed", func(t *testing.T) {
			f := fields()
			f["dv"] = dv
			_, err := stored.ParseEvent(f)
			assert.ErrorContains(t, err, "digest version")
		})
	}
}

func TestHolderSeq_ReadsAnEntryAsRedisGivesIt(t *testing.T) {
	h, seq, ok := stored.HolderSeq(map[string]any{stored.EventHolder: "u1", stored.EventSeq: "7"})
	assert.Equal(t, []any{"u1", int64(7), true}, []any{h, seq, ok})
	for _, v := range []map[string]any{{stored.EventHolder: "u1"}, {stored.EventHolder: "u1", stored.EventSeq: "x"}, {stored.EventSeq: 7}} {
		_, _, ok := stored.HolderSeq(v)
		assert.False(t, ok, "%v", v)
	}
}
