package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// TestErrors_EveryCodeReexported holds engine's sentinels to the contract's
// codes: each code of instructions.Codes is re-exported, none is missing.
func TestErrors_EveryCodeReexported(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	require.NoError(t, err)
	exported := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok && len(v.Values) == 1 {
			if sel, ok := v.Values[0].(*ast.SelectorExpr); ok && sel.Sel.Name == v.Names[0].Name {
				exported[v.Names[0].Name] = true
			}
		}
		return true
	})
	for _, c := range instructions.Codes {
		name := "Err"
		for _, w := range strings.Split(string(c), "_") {
			if w != "ID" {
				w = w[:1] + strings.ToLower(w[1:])
			}
			name += w
		}
		assert.True(t, exported[name], "engine does not re-export %s as %s", c, name)
	}
	assert.Len(t, exported, len(instructions.Codes), "engine re-exports a sentinel that is not a code")
}
