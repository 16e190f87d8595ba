package engine_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeps_LibrariesLinkNoHarness holds the rule of the package layout: a
// program that imports the engine, the outbox relay, the ledger or reconcile
// links no test machinery and no process harness.
func TestDeps_LibrariesLinkNoHarness(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps",
		"github.com/atomledger/atomledger/engine", "github.com/atomledger/atomledger/outbox",
		"github.com/atomledger/atomledger/ledger", "github.com/atomledger/atomledger/reconcile").CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	for _, pkg := range strings.Fields(string(out)) {
		harness := strings.HasPrefix(pkg, "github.com/atomledger/") && strings.HasSuffix(pkg, "test")
		assert.False(t, pkg == "testing" || pkg == "os/exec" || harness, "the library links %s", pkg)
	}
}
