package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlotTag_CoversEverySlot(t *testing.T) {
	seen := make(map[string]int, Slots)
	for s := range Slots {
		tag := SlotTag(s)
		require.Equal(t, s, Slot(tag), "Slot(SlotTag(%d)) for tag %q", s, tag)
		require.NotEmpty(t, tag)
		require.LessOrEqual(t, len(tag), 4, "tag %q of slot %d", tag, s)
		require.Empty(t, strings.Trim(tag, tagAlphabet), "tag %q of slot %d outside [0-9a-z]", tag, s)
		if prev, dup := seen[tag]; dup {
			t.Fatalf("tag %q used by slots %d and %d", tag, prev, s)
		}
		seen[tag] = s
	}
}

// TestSlotTag_IsFirstInEnumeration pins the table down: the tag of a slot is
// the first string, shortest first and then in alphabet order, that lands in
// it. So no string of up to two characters may come before its slot's tag.
func TestSlotTag_IsFirstInEnumeration(t *testing.T) {
	before := func(a, b string) bool { // a comes before b in the enumeration
		return len(a) < len(b) || len(a) == len(b) && a < b
	}
	assert.Equal(t, "0", SlotTag(Slot("0")), "the very first string is always a tag")
	var short []string
	for _, a := range tagAlphabet {
		short = append(short, string(a))
		for _, b := range tagAlphabet {
			short = append(short, string(a)+string(b))
		}
	}
	for _, s := range short {
		tag := SlotTag(Slot(s))
		assert.False(t, before(s, tag), "%q lands in slot %d and comes before its tag %q", s, Slot(s), tag)
	}
}

func TestSlotTag_PanicsOutOfRange(t *testing.T) {
	assert.Panics(t, func() { SlotTag(-1) })
	assert.Panics(t, func() { SlotTag(Slots) })
}

// docs/json-door.md tells clients in other languages how to name a slot's
// outbox and expiry index; its examples must be what the engine uses.
func TestSlotTag_JSONDoorExamplesMatch(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "json-door.md"))
	require.NoError(t, err)
	rows := regexp.MustCompile("(?m)^\\| ([A-Za-z0-9_.:-]+) \\| (\\d+) \\| `\\{([0-9a-z]+)\\}:outbox` \\| `\\{([0-9a-z]+)\\}:expiry` \\|$").
		FindAllStringSubmatch(string(doc), -1)
	require.NotEmpty(t, rows, "the examples table")
	for _, r := range rows {
		slot := HolderSlot(r[1])
		assert.Equal(t, r[2], strconv.Itoa(slot), "slot of %s", r[1])
		assert.Equal(t, Outbox(slot), "{"+r[3]+"}:outbox", "outbox of %s", r[1])
		assert.Equal(t, Expiry(slot), "{"+r[4]+"}:expiry", "expiry index of %s", r[1])
	}
}
