package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
)

func TestGenerated_IsCurrent(t *testing.T) {
	src, err := os.ReadFile("../../lua/atomledger.lua")
	require.NoError(t, err)
	want, err := generate(src)
	require.NoError(t, err)
	assert.True(t, string(want) == string(src), "the library's generated part is out of date: run go generate ./lua")
}

// The table's layout is the one its comment gives the library.
func TestPart_TagAtItsOffset(t *testing.T) {
	p := part()
	i := strings.Index(p, "[[\n")
	require.Positive(t, i)
	table := p[i+3:]
	for _, s := range []int{0, 1, 63, 64, 3063, 16383} {
		at := (s/tagsPerLine)*(tagsPerLine*tagWidth+1) + (s%tagsPerLine)*tagWidth
		assert.Equal(t, cluster.SlotTag(s), strings.TrimRight(table[at:at+tagWidth], " "), "slot %d", s)
	}
	assert.Equal(t, ":tx:", infix())
}

// A name that is not a Lua name, or is a keyword, is a key in brackets; a
// table's line breaks before it would pass lineWidth.
func TestTable_KeysAndLines(t *testing.T) {
	assert.Equal(t, "{credit = true, [\"end\"] = true, [\"a-b\"] = false}",
		set([]string{"credit", "end", "a-b"}, map[string]bool{"credit": true, "end": true}))
	long := table([]string{strings.Repeat("a", 60), strings.Repeat("b", 60)})
	assert.Equal(t, "{"+strings.Repeat("a", 60)+",\n  "+strings.Repeat("b", 60)+"}", long)
}
