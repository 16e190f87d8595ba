package instructions

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The library's JSON door takes an op's fields from Op's JSON keys, in their
// order (internal/luagen): they are fieldNames, the order the engine checks
// them in, and each field sets its own bit.
func TestFieldNames_AreOpsJSONKeysInOrder(t *testing.T) {
	typ := reflect.TypeFor[Op]()
	var keys []string
	for i := range typ.NumField() {
		k, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		keys = append(keys, k)
	}
	require.Equal(t, "op", keys[0])
	assert.Equal(t, fieldNames, keys[1:])
	for bit, name := range fieldNames {
		var op Op
		f := reflect.ValueOf(&op).Elem().Field(bit + 1)
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.New(f.Type().Elem()))
		} else {
			f.SetString("1")
		}
		assert.Equal(t, field(1)<<bit, op.fields(), name)
	}
}
