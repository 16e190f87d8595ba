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
	// dodge the cluster's slot checks.
	for _, bad := range []string{"'{h:", "\"{h:", ":tx:", ":outbox'", ":meta'", "'{x:"} {
		assert.NotContains(t, Library.Source, bad)
	}
}
