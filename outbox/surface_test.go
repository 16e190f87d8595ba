package outbox_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/internal/surfacetest"
)

// surface is every exported identifier of package outbox (outside its
// tests). Adding one means adding it here, a deliberate act.
var surface = []string{
	"NewRelay", "Options", "Relay", "Relay.Round", "Relay.Run", "Relay.Stats", "Sink", "Stats",
}

// TestSurface_ExportsAreDeliberate holds outbox's exported identifiers to
// surface.
func TestSurface_ExportsAreDeliberate(t *testing.T) {
	want := slices.Sorted(slices.Values(surface))
	assert.Equal(t, want, surfacetest.Exported(t, "."), "outbox's exported identifiers: an export added or removed must be added to or removed from surface")
}
