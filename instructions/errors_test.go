package instructions_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// TestCodes_EachCodeInEveryList holds errors.go's three lists to one another:
// Go cannot enumerate constants, so each code is written as a constant, in
// Codes and as a sentinel, and a code added to one list only fails here.
func TestCodes_EachCodeInEveryList(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	require.NoError(t, err)
	var consts []string           // names of the Code constants, in order
	sentinels := map[string]int{} // constant name -> sentinels made of it
	ast.Inspect(f, func(n ast.Node) bool {
		v, ok := n.(*ast.ValueSpec)
		if !ok || len(v.Names) != 1 || len(v.Values) != 1 {
			return true
		}
		if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Code" {
			consts = append(consts, v.Names[0].Name)
		}
		if call, ok := v.Values[0].(*ast.CallExpr); ok && len(call.Args) == 1 {
			if fn, ok := call.Fun.(*ast.Ident); ok && fn.Name == "sentinel" {
				if arg, ok := call.Args[0].(*ast.Ident); ok {
					sentinels[arg.Name]++
					assert.Equal(t, "Err"+arg.Name[len("Code"):], v.Names[0].Name, "the sentinel of %s", arg.Name)
				}
			}
		}
		return true
	})
	require.NotEmpty(t, consts)
	var listed []string
	for _, c := range instructions.Codes {
		listed = append(listed, codeName(c))
	}
	assert.Equal(t, consts, listed, "Codes lists every constant once, in their order")
	for _, c := range consts {
		assert.Equal(t, 1, sentinels[c], "one sentinel for %s", c)
	}
	assert.Len(t, sentinels, len(consts), "a sentinel of no code")
}

// codeName gives the constant's name of a code: INVALID_ID is CodeInvalidID.
func codeName(c instructions.Code) string {
	name, up := "Code", true
	s := string(c)
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '_':
			up = true
		case up:
			name += string(s[i])
			up = false
		default:
			name += string(s[i] + 'a' - 'A')
		}
	}
	if len(name) > 2 && name[len(name)-2:] == "Id" {
		name = name[:len(name)-2] + "ID"
	}
	return name
}
