package lua

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
