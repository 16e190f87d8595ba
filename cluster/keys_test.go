package cluster

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHolder_KeyNames(t *testing.T) {
	assert.Equal(t, "{h:u1001}", Holder("u1001"))
	h, ok := HolderOfKey(Holder("merchant:88"))
	assert.True(t, ok)
	assert.Equal(t, "merchant:88", h)
	for _, k := range []string{Tx("u1001", "a"), Transfer("t"), Outbox(1), "{h:}x", "h:u1"} {
		_, ok := HolderOfKey(k)
		assert.False(t, ok, k)
	}
	assert.Equal(t, "{h:u1001}:tx:order-55-pay", Tx("u1001", "order-55-pay"))
	assert.Equal(t, Slot("{h:u1001}"), HolderSlot("u1001"))
}

func TestHolder_KeysShareHolderSlot(t *testing.T) {
	for _, holder := range []string{"u1001", "merchant:88", "a.b-c_d", "x", "0123456789012345678901234567890123456789012345678901234567890123"} {
		t.Run(holder, func(t *testing.T) {
			slot := HolderSlot(holder)
			for _, key := range []string{Holder(holder), Tx(holder, "id-1")} {
				assert.Equal(t, slot, Slot(key), key)
			}
			assert.Equal(t, slot, Slot(Outbox(slot)), "the holder's outbox is in its slot")
		})
	}
}

func TestOutbox_LivesInItsSlot(t *testing.T) {
	for s := range Slots {
		if Slot(Outbox(s)) != s || Slot(Expiry(s)) != s || Slot(Transfers(s)) != s {
			t.Fatalf("slot %d: Outbox %q in %d, Expiry %q in %d, Transfers %q in %d", s, Outbox(s), Slot(Outbox(s)),
				Expiry(s), Slot(Expiry(s)), Transfers(s), Slot(Transfers(s)))
		}
	}
	assert.Equal(t, "{"+SlotTag(7)+"}:outbox", Outbox(7))
	assert.Equal(t, "{"+SlotTag(7)+"}:expiry", Expiry(7))
	assert.Equal(t, "{"+SlotTag(7)+"}:transfers", Transfers(7))
}

func TestTransfer_RecordInItsOwnSlotNextToItsIndex(t *testing.T) {
	assert.Equal(t, "{x:trade-9001}", Transfer("trade-9001"))
	s := TransferSlot("trade-9001")
	assert.Equal(t, Slot("x:trade-9001"), s)
	assert.Equal(t, s, Slot(Transfers(s)))
}

func TestSlotKeyPrefixes_CoverSlotKeysOnly(t *testing.T) {
	prefixes := SlotKeyPrefixes()
	matches := func(key string) (n int) {
		for _, p := range prefixes {
			if strings.HasPrefix(key, p) {
				n++
			}
		}
		return n
	}
	for s := range Slots {
		for _, k := range []string{Outbox(s), Expiry(s), Transfers(s)} {
			if matches(k) != 1 {
				t.Fatalf("%s matches %d prefixes, want 1", k, matches(k))
			}
		}
	}
	for _, h := range []string{"u1001", "h", "x", "0", "alice"} {
		for _, k := range []string{Holder(h), Tx(h, "id-1"), Transfer(h)} {
			assert.Zero(t, matches(k), "%s is not a per-slot key", k)
		}
	}
	for i, p := range prefixes {
		for j, q := range prefixes {
			if i != j && strings.HasPrefix(q, p) {
				t.Fatalf("prefix %q begins %q: Redis refuses overlapping BCAST prefixes", p, q)
			}
		}
	}
}
