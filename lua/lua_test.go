package lua

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/sha.golden")

func TestScripts_MatchGoldenSHA(t *testing.T) {
	var b strings.Builder
	for _, s := range All {
		fmt.Fprintf(&b, "%s %s\n", s.SHA1, s.Name)
	}
	golden := filepath.Join("testdata", "sha.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String(), "a script changed: review it, then run go test ./lua -update")
}

func TestScripts_StartWithShebang(t *testing.T) {
	for _, s := range All {
		assert.True(t, strings.HasPrefix(s.Source, "#!lua"), s.Name)
	}
}

func TestScripts_BuildNoKeyNames(t *testing.T) {
	// Every key comes in KEYS: a key name built inside a script would dodge
	// the cluster's slot checks.
	for _, s := range All {
		for _, bad := range []string{"'{h:", "\"{h:", ":tx:", ":outbox'", ":meta'"} {
			assert.NotContains(t, s.Source, bad, s.Name)
		}
	}
}
