package engine_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

// One fact, one place: every op of the Go table has one handler in the
// library and no handler lacks its row; the ops a suspended holder is
// refused are the same on both sides.
func TestLibrary_HandlesTheOpsOfTheTable(t *testing.T) {
	var table, takesOut []string
	for _, op := range instructions.Ops() {
		table = append(table, op.Name)
		if op.TakesOut {
			takesOut = append(takesOut, op.Name)
		}
	}
	src := lua.Library.Source
	var handlers []string
	for _, m := range regexp.MustCompile(`(?m)^function OPS\.(\w+)\(`).FindAllStringSubmatch(src, -1) {
		handlers = append(handlers, m[1])
	}
	var refused []string
	if m := regexp.MustCompile(`(?s)local TAKES_OUT = \{(.*?)\}`).FindStringSubmatch(src); m != nil {
		for _, n := range regexp.MustCompile(`(\w+) = true`).FindAllStringSubmatch(m[1], -1) {
			refused = append(refused, n[1])
		}
	}
	slices.Sort(table)
	slices.Sort(handlers)
	slices.Sort(takesOut)
	slices.Sort(refused)
	assert.Equal(t, table, handlers, "instructions.Ops and the library's OPS")
	assert.Equal(t, takesOut, refused, "OpSpec.TakesOut and the library's TAKES_OUT")
	assert.NotEmpty(t, refused)
}
