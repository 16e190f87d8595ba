package lua

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

var update = flag.Bool("update", false, "rewrite testdata/sha.golden")

func TestLibrary_MatchesGoldenSHA(t *testing.T) {
	got := Library.SHA1 + " atomledger.lua\n"
	golden := filepath.Join("testdata", "sha.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "the library changed: review it, then run go test ./lua -update")
}

func TestLibrary_FirstLineNamesIt(t *testing.T) {
	first, _, _ := strings.Cut(Library.Source, "\n")
	assert.Equal(t, "#!lua name="+Library.Name, first)
}

func TestLibrary_BuildsNoKeyNames(t *testing.T) {
	// Every key comes in KEYS: a key name built inside the library would
	// dodge the cluster's slot checks. The generated part holds the
	// contract's key names, which the checks of the caller's keys compare
	// with; the rest of the library spells none.
	begin := strings.Index(Library.Source, "-- BEGIN generated")
	end := strings.Index(Library.Source, "-- END generated")
	require.True(t, begin > 0 && end > begin, "the generated part")
	handWritten := Library.Source[:begin] + Library.Source[end:]
	for _, bad := range []string{"'{h:", "\"{h:", ":tx:", ":outbox'", ":meta'", "'{x:"} {
		assert.False(t, strings.Contains(handWritten, bad), "the library spells %q", bad)
	}
}

// The op table is generated into the library (internal/luagen); the code per
// op is not: each op of instructions.Ops has its handler (OPS) and, unless it
// is a client's op with no field, or open (whose lanes name no field: it reads
// only the status every call reads), its list of the holder's fields it reads
// (NAMES); neither has an op the table lacks.
func TestLibrary_HandlesTheOpsOfTheTable(t *testing.T) {
	var table, naming []string
	for _, op := range instructions.Ops() {
		table = append(table, op.Name)
		if req, opt := op.Fields(); !op.Client || (len(req)+len(opt) > 0 && op.Name != instructions.OpOpen) {
			naming = append(naming, op.Name)
		}
	}
	var handlers, names []string
	for _, m := range regexp.MustCompile(`(?m)^function OPS\.(\w+)\(`).FindAllStringSubmatch(Library.Source, -1) {
		handlers = append(handlers, m[1])
	}
	block := regexp.MustCompile(`(?s)\nlocal NAMES = \{\n(.*?)\n\}`).FindStringSubmatch(Library.Source)
	require.NotNil(t, block, "NAMES in the library")
	for _, m := range regexp.MustCompile(`(?m)^  (\w+) = function`).FindAllStringSubmatch(block[1], -1) {
		names = append(names, m[1])
	}
	slices.Sort(table)
	slices.Sort(naming)
	slices.Sort(handlers)
	slices.Sort(names)
	assert.Equal(t, table, handlers, "instructions.Ops and the library's OPS")
	assert.Equal(t, naming, names, "instructions.Ops and the library's NAMES")
}
