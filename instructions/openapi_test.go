package instructions

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The request schemas of docs/openapi.yaml are held here to what they
// describe: the op table (opSpecs), the ops of a transfer (transferOps), the
// reserved prefixes, and the validators themselves, run over the same
// strings and over the golden fixtures. The module has no JSON Schema
// library, and one is not worth a dependency for a test: openAPISchemas
// checks the keywords the document uses and fails on any other, so a keyword
// it does not know cannot pass unchecked.

type openAPISchemas map[string]any

func readOpenAPISchemas(t *testing.T) openAPISchemas {
	t.Helper()
	data, err := os.ReadFile("../docs/openapi.yaml")
	require.NoError(t, err)
	var doc struct {
		Components struct {
			Schemas map[string]any `yaml:"schemas"` // not openAPISchemas: yaml would give nested maps that type too
		} `yaml:"components"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	require.NotEmpty(t, doc.Components.Schemas)
	return openAPISchemas(doc.Components.Schemas)
}

// named is the schema components.schemas.name, or the schema a $ref names.
func (d openAPISchemas) named(t *testing.T, name string) map[string]any {
	t.Helper()
	s, ok := d[strings.TrimPrefix(name, "#/components/schemas/")].(map[string]any)
	require.True(t, ok, "no schema %s in the document", name)
	return s
}

// opFields is what an op's schema lets it take, besides "op".
type opFields struct{ Required, Optional []string }

// opUnion reads a oneOf of op schemas: each op's name and fields. Each
// branch must refuse other fields and be the discriminator's mapping for
// its name, so that the union and the mapping cannot say different things.
func (d openAPISchemas) opUnion(t *testing.T, name string) map[string]opFields {
	t.Helper()
	union := d.named(t, name)
	mapping := mapAt(t, mapAt(t, union, "discriminator", name), "mapping", name)
	got := map[string]opFields{}
	for _, branch := range listAt(t, union, "oneOf", name) {
		ref, _ := branch.(map[string]any)["$ref"].(string)
		s := d.named(t, ref)
		props := mapAt(t, s, "properties", ref)
		enum := listAt(t, mapAt(t, props, "op", ref), "enum", ref)
		require.Len(t, enum, 1, "%s names one op", ref)
		op := enum[0].(string)
		assert.Equal(t, false, s["additionalProperties"], "%s refuses other fields", ref)
		assert.Equal(t, ref, mapping[op], "the discriminator of %s maps %s to %s", name, op, ref)
		var f opFields
		for _, r := range listAt(t, s, "required", ref) {
			if r != "op" {
				f.Required = append(f.Required, r.(string))
			}
		}
		for p := range props {
			if p != "op" && !slices.Contains(f.Required, p) {
				f.Optional = append(f.Optional, p)
			}
		}
		slices.Sort(f.Required)
		slices.Sort(f.Optional)
		_, dup := got[op]
		assert.False(t, dup, "%s has two schemas for %s", name, op)
		got[op] = f
	}
	assert.Len(t, mapping, len(got), "the discriminator of %s maps exactly its branches", name)
	return got
}

func mapAt(t *testing.T, m map[string]any, key, where string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	require.True(t, ok, "%s has no object %q", where, key)
	return v
}

func listAt(t *testing.T, m map[string]any, key, where string) []any {
	t.Helper()
	v, ok := m[key].([]any)
	require.True(t, ok, "%s has no list %q", where, key)
	return v
}

// fieldsOf names the fields of a field set, sorted.
func fieldsOf(f field) []string {
	var names []string
	for bit, name := range fieldNames {
		if f&(1<<bit) != 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func TestOpenAPI_OpSchemasAreTheOpTable(t *testing.T) {
	want := map[string]opFields{}
	for op, spec := range opSpecs {
		want[op] = opFields{Required: fieldsOf(spec.required), Optional: fieldsOf(spec.optional)}
	}
	assert.Equal(t, want, readOpenAPISchemas(t).opUnion(t, "Op"))
}

// A part takes the ops of transferOps, each with the fields of the op table.
func TestOpenAPI_PartOpSchemasAreTheTransferOps(t *testing.T) {
	want := map[string]opFields{}
	for op := range transferOps {
		spec := opSpecs[op]
		want[op] = opFields{Required: fieldsOf(spec.required), Optional: fieldsOf(spec.optional)}
	}
	assert.Equal(t, want, readOpenAPISchemas(t).opUnion(t, "PartOp"))
}

// Each string schema accepts exactly what the Go validator accepts, on
// strings at every edge; where JSON Schema cannot follow (a byte length, the
// registry's scales), the case says so and the document's description does.
func TestOpenAPI_StringSchemasAreTheValidators(t *testing.T) {
	d := readOpenAPISchemas(t)
	ids := []string{"a", "u1001", "merchant:88", "c-9", "A_b.c:d-e", ".", "..", "...", ".a", "a.", "x", "x:", "x:1", "ax:1",
		"sweep", "sweep-", "sweep-1", "a-sweep-1", "X:1", "", " ", "a b", "{h}", "c/1", "é", "a\n", "$H",
		strings.Repeat("i", 60), strings.Repeat("i", 61), strings.Repeat("i", 64), strings.Repeat("i", 65), strings.Repeat(".", 64)}
	for _, s := range ids {
		assert.Equal(t, ValidID(s), d.valid(t, "ID", s), "ID %q", s)
		assert.Equal(t, ValidID(s) && reservedName("id", s, NoOp) == nil, d.valid(t, "InstructionID", s), "InstructionID %q", s)
		assert.Equal(t, ValidID(s) && reservedName("hold", s, 0) == nil, d.valid(t, "HoldID", s), "HoldID %q", s)
		assert.Equal(t, ValidID(s) && reservedName("counterparty", s, NoOp) == nil, d.valid(t, "Counterparty", s), "Counterparty %q", s)
		assert.Equal(t, ValidID(s) && len(s) <= MaxTransferID, d.valid(t, "TransferID", s), "TransferID %q", s)
	}
	// Every reserved prefix is refused where the engine refuses it.
	for _, r := range reserved {
		assert.False(t, d.valid(t, "InstructionID", r.prefix+"1"), "InstructionID %q", r.prefix+"1")
		assert.Equal(t, r.idOnly, d.valid(t, "HoldID", r.prefix+"1"), "HoldID %q", r.prefix+"1")
		assert.Equal(t, r.idOnly, d.valid(t, "Counterparty", r.prefix+"1"), "Counterparty %q", r.prefix+"1")
	}

	// At a scale that takes its decimals, an amount that fits in 2^53-1
	// units is judged on its syntax alone, which is what the schema sees.
	scaleOf := func(s string) int32 {
		_, frac, _ := strings.Cut(s, ".")
		return int32(min(len(frac), MaxScale))
	}
	for _, s := range []string{"1", "80.00", "0.5", "0.000000000000001", "007", "1.0", strings.Repeat("0", 39) + "1",
		"0", "00", "0.00", "0.", ".5", "1.", "-1", "+1", "1e3", "1E3", " 1", "1 ", "1,5", "0x10", "inf", "NaN", "１", "",
		strings.Repeat("0", 40) + "1", "1." + strings.Repeat("0", 41)} {
		_, ok := ToUnits(s, scaleOf(s))
		assert.Equal(t, ok, d.valid(t, "OpAmount", s), "OpAmount %q", s)
	}
	// What the schema cannot see: the asset's scale and the range in units.
	for _, s := range []string{"1.0000000000000001", "9007199254740992"} {
		_, ok := ToUnits(s, scaleOf(s))
		assert.True(t, !ok && d.valid(t, "OpAmount", s), "OpAmount %q: refused by the engine, beyond what JSON Schema can say", s)
	}

	for _, s := range []string{"CNY", "USDT", "A_1", strings.Repeat("A", 16), strings.Repeat("A", 17), "cny", "points", "POINTS", "", "C NY", "€"} {
		assert.Equal(t, assetCode.MatchString(s), d.valid(t, "Asset", s), "Asset %q", s)
		assert.Equal(t, assetCode.MatchString(s) || s == PointsLeg, d.valid(t, "Leg", s), "Leg %q", s)
	}

	memo := mapAt(t, mapAt(t, d.named(t, "Instruction"), "properties", "Instruction"), "memo", "Instruction")
	for _, s := range []string{"", "checkout order 55", "é ü 中文 🙂", strings.Repeat("m", MaxMemo), strings.Repeat("m", MaxMemo+1),
		"a\nb", "tab\there", "\x00", "del\x7f", "\x1f", "\u0080 is not a control character here"} {
		assert.Equal(t, validMemo(s) == nil, d.check(t, memo, s) == "", "memo %q", s)
	}
	// maxLength counts characters: 129 two-byte characters pass it and are 258 bytes.
	long := strings.Repeat("é", MaxMemo/2+1)
	assert.True(t, validMemo(long) != nil && d.check(t, memo, long) == "", "a memo of %d bytes in %d characters", len(long), utf8.RuneCountInString(long))
}

// instructionCases are instructions beyond the fixtures, for what the
// fixtures do not try: null, empty fields, each op's fields.
var instructionCases = []string{
	`{"id":"a","holder":"h","ops":[{"op":"open"},{"op":"suspend"},{"op":"resume"}]}`,
	`{"id":"a","holder":"h","counterparty":"m:1","memo":"m","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"o","ttl_ms":1000}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"freeze_points","amount":"1","hold":"o","ttl_ms":1}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"lock_coupon","coupon":"c","hold":"o","ttl_ms":315360000000}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"lock_coupon","coupon":"c","hold":"o","ttl_ms":315360000001}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"o","ttl_ms":0}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"o","ttl_ms":1.5}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"o","ttl_ms":"1"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"settle","hold":"o"},{"op":"release","hold":"o","leg":"points"},{"op":"settle","hold":"o","leg":"CNY","amount":"1"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"settle","hold":"o","amount":"1"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"release","hold":"o","amount":"1"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"settle","hold":"o","asset":"CNY"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"settle","hold":"x:t"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"earn_points","amount":"5"},{"op":"spend_points","amount":"5"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"earn_points","amount":"5","asset":"CNY"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"grant_coupon","coupon":"c","expires_ms":1796000000000},{"op":"redeem_coupon","coupon":"c"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"grant_coupon","coupon":"c","expires_ms":9007199254740992}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"grant_coupon","coupon":"c","expires_ms":0}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"redeem_coupon","coupon":"c","expires_ms":1}]}`,
	`{"id":"a","holder":"h","memo":null,"ops":[{"op":"open"}]}`,
	`{"id":"a","holder":"h","counterparty":null,"ops":[{"op":"open"}]}`,
	`{"id":null,"holder":"h","ops":[{"op":"open"}]}`,
	`{"id":"a","holder":null,"ops":[{"op":"open"}]}`,
	`{"id":"a","holder":"h","ops":null}`,
	`{"id":"a","holder":"h","ops":[]}`,
	`{"id":"a","holder":"h"}`,
	`{"holder":"h","ops":[{"op":"open"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"open","hold":null}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"earn_points","amount":"1","asset":null}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"earn_points","amount":"1","leg":""}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"o","ttl_ms":null}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":null}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":1}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"credit","amount":"1"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"points","amount":"1"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":""}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"transfer"}]}`,
	`{"id":"a","holder":"h","ops":[{}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"open","Op":"open"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"open"}],"extra":1}`,
	`{"id":"sweep-1","holder":"h","ops":[{"op":"open"}]}`,
	`{"id":"a","holder":"x:1","counterparty":"sweep-1","ops":[{"op":"open"}]}`,
	`{"id":"a","holder":"h","counterparty":"x:t","ops":[{"op":"open"}]}`,
	`{"id":"..","holder":"h","ops":[{"op":"open"}]}`,
	`{"id":"a","holder":".","ops":[{"op":"open"}]}`,
}

// For each instruction of the golden fixtures and of instructionCases, the
// schema and the instructions package agree whether it is valid, except
// where JSON Schema cannot follow: the asset registry (UNKNOWN_ASSET), an
// amount's scale and range, the memo's bytes.
func TestOpenAPI_InstructionSchemaAgreesWithValidation(t *testing.T) {
	d := readOpenAPISchemas(t)
	reg := MustParseAssets(DefaultAssets)
	inputs := instructionCases
	ins, err := filepath.Glob("../testdata/*/in.json")
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	for _, path := range ins {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var list []stdjson.RawMessage
		require.NoError(t, stdjson.Unmarshal(bytes.ReplaceAll(data, []byte("$H"), []byte("h1")), &list), path)
		for _, raw := range list {
			inputs = append(inputs, string(raw))
		}
	}
	for _, in := range inputs {
		var err error
		instr, derr := Decode([]byte(in))
		if err = derr; err == nil {
			err = instr.Validate(reg)
		}
		why := d.check(t, d.named(t, "Instruction"), decodeForSchema(t, in))
		if err != nil && beyondJSONSchema(instr, err) {
			assert.Empty(t, why, "%s\nthe engine: %v, which JSON Schema cannot say; the schema should accept it", in, err)
			continue
		}
		assert.Equal(t, err == nil, why == "", "%s\nthe engine: %v\nthe schema: %s", in, err, why)
	}
}

// beyondJSONSchema tells whether err is one of the refusals the document
// leaves to its descriptions.
func beyondJSONSchema(in Instruction, err error) bool {
	e, ok := err.(*Error)
	if !ok {
		return false
	}
	switch e.Code {
	case CodeUnknownAsset, CodeInvalidAmount:
		// Decode's refusals leave no instruction: those the schema sees.
		if e.OpIndex < 0 || e.OpIndex >= len(in.Ops) {
			return false
		}
		op := in.Ops[e.OpIndex]
		if e.Code == CodeUnknownAsset {
			// A code of the right shape that the registry lacks.
			return assetCode.MatchString(op.Asset + op.Leg)
		}
		return decimalSyntax(string(op.Amount)) && strings.Trim(string(op.Amount), "0.") != ""
	case CodeInvalidInstruction:
		return e.OpIndex == NoOp && len(in.Memo) > MaxMemo && utf8.RuneCountInString(in.Memo) <= MaxMemo
	}
	return false
}

var transferCases = []string{
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"settle","hold":"o","leg":"USDT","amount":"100"},{"op":"credit","asset":"BTC","amount":"0.002"}]},{"holder":"b","ops":[{"op":"settle","hold":"p","leg":"BTC","amount":"0.002"},{"op":"credit","asset":"USDT","amount":"100"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"spend_points","amount":"7"}]},{"holder":"b","ops":[{"op":"earn_points","amount":"7"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"settle","hold":"o","leg":"CNY"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"settle","hold":"o"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"o"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"open"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"settle","hold":"x:o","leg":"CNY","amount":"1"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1"}]},{"holder":"b","ops":[]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1"}]},{"holder":"b","memo":"m","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1","hold":null}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"` + strings.Repeat("t", 61) + `","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
	`{"id":"..","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
}

// What JSON Schema cannot say of a transfer, the schema accepts and the
// engine refuses: the balance of the parts, one part per holder.
var transferBeyondJSONSchema = []string{
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1"}]},{"holder":"b","ops":[{"op":"credit","asset":"CNY","amount":"2"}]}]}`,
	`{"id":"t1","parts":[{"holder":"a","ops":[{"op":"debit","asset":"CNY","amount":"1"}]},{"holder":"a","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}]}`,
}

func TestOpenAPI_TransferSchemaAgreesWithValidation(t *testing.T) {
	d := readOpenAPISchemas(t)
	reg := MustParseAssets(DefaultAssets)
	validate := func(in string) error {
		tr, err := DecodeTransfer([]byte(in))
		if err == nil {
			_, err = tr.Normalize(reg)
		}
		return err
	}
	for _, in := range transferCases {
		err := validate(in)
		why := d.check(t, d.named(t, "Transfer"), decodeForSchema(t, in))
		assert.Equal(t, err == nil, why == "", "%s\nthe engine: %v\nthe schema: %s", in, err, why)
	}
	for _, in := range transferBeyondJSONSchema {
		assert.Error(t, validate(in), in)
		assert.Empty(t, d.check(t, d.named(t, "Transfer"), decodeForSchema(t, in)), in)
	}
}

// decodeForSchema reads JSON as a schema sees it, numbers as written.
func decodeForSchema(t *testing.T, in string) any {
	t.Helper()
	dec := stdjson.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), in)
	return v
}

// valid tells whether the named schema accepts v.
func (d openAPISchemas) valid(t *testing.T, name string, v any) bool {
	t.Helper()
	return d.check(t, d.named(t, name), v) == ""
}

// annotations are the keywords that do not constrain a value.
var annotations = []string{"description", "example", "format", "default", "discriminator", "title"}

// check is "" when the schema accepts v, else why not. It knows the
// keywords of JSON Schema the document uses on requests and fails the test
// on any other.
func (d openAPISchemas) check(t *testing.T, s map[string]any, v any) string {
	t.Helper()
	for k, arg := range s {
		if why := d.keyword(t, s, k, arg, v); why != "" {
			return why
		}
	}
	return ""
}

func (d openAPISchemas) keyword(t *testing.T, s map[string]any, k string, arg, v any) string {
	t.Helper()
	obj, isObj := v.(map[string]any)
	str, isStr := v.(string)
	num, isNum := v.(stdjson.Number)
	arr, isArr := v.([]any)
	switch k {
	case "$ref":
		return d.check(t, d.named(t, arg.(string)), v)
	case "allOf", "anyOf", "oneOf":
		n, why := 0, ""
		for _, sub := range arg.([]any) {
			if w := d.check(t, sub.(map[string]any), v); w == "" {
				n++
			} else if why == "" || k == "allOf" {
				why = w
			}
		}
		switch {
		case k == "allOf" && n < len(arg.([]any)), k == "anyOf" && n == 0, k == "oneOf" && n == 0:
			return why
		case k == "oneOf" && n > 1:
			return "matches more than one schema of a oneOf"
		}
	case "not":
		if d.check(t, arg.(map[string]any), v) == "" {
			return "matches a schema it must not"
		}
	case "type":
		var ok bool
		switch arg {
		case "object":
			ok = isObj
		case "string":
			ok = isStr
		case "array":
			ok = isArr
		case "integer":
			ok = isNum && regexp.MustCompile(`^-?[0-9]+$`).MatchString(string(num))
		case "boolean":
			_, ok = v.(bool)
		default:
			t.Fatalf("type %v unknown to the test", arg)
		}
		if !ok {
			return "not of type " + arg.(string)
		}
	case "enum":
		if !slices.Contains(arg.([]any), v) {
			return "not one of the enum"
		}
	case "pattern":
		if isStr && !regexp.MustCompile(arg.(string)).MatchString(str) {
			return "does not match " + arg.(string)
		}
	case "minLength", "maxLength":
		if n := utf8.RuneCountInString(str); isStr && (k == "minLength" && n < arg.(int) || k == "maxLength" && n > arg.(int)) {
			return k + " broken"
		}
	case "minimum", "maximum":
		if isNum {
			x, _ := new(big.Rat).SetString(string(num))
			bound, ok := new(big.Rat).SetString(fmt.Sprint(arg))
			require.True(t, ok, "%s %v is not a number", k, arg)
			if c := x.Cmp(bound); k == "minimum" && c < 0 || k == "maximum" && c > 0 {
				return k + " broken"
			}
		}
	case "required":
		for _, r := range arg.([]any) {
			if _, ok := obj[r.(string)]; isObj && !ok {
				return "needs " + r.(string)
			}
		}
	case "properties":
		for name, sub := range arg.(map[string]any) {
			if fv, ok := obj[name]; isObj && ok {
				if why := d.check(t, sub.(map[string]any), fv); why != "" {
					return name + ": " + why
				}
			}
		}
	case "additionalProperties":
		require.Equal(t, false, arg, "the test knows additionalProperties: false only")
		props, _ := s["properties"].(map[string]any)
		for name := range obj {
			if _, ok := props[name]; !ok {
				return "takes no " + name
			}
		}
	case "minItems", "maxItems":
		if isArr && (k == "minItems" && len(arr) < arg.(int) || k == "maxItems" && len(arr) > arg.(int)) {
			return k + " broken"
		}
	case "items":
		for i, item := range arr {
			if why := d.check(t, arg.(map[string]any), item); why != "" {
				return "item " + strconv.Itoa(i) + ": " + why
			}
		}
	default:
		require.Contains(t, annotations, k, "keyword %q unknown to the test", k)
	}
	return ""
}
