package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// advOutcome is a door's answer reduced to what a caller acts on: the code
// ("" when applied) and the op index of a refusal.
type advOutcome struct {
	Code string
	Op   int
}

// advEngine sends text through the engine's door (instructions.Decode, then
// engine.Apply): the daemon's and any Go caller's path.
func advEngine(t *testing.T, text string) advOutcome {
	t.Helper()
	in, err := instructions.Decode([]byte(text))
	if err == nil {
		_, err = eng.Apply(context.Background(), in)
	}
	if err == nil {
		return advOutcome{}
	}
	var e *instructions.Error
	require.True(t, errors.As(err, &e), "%v", err)
	return advOutcome{string(e.Code), e.OpIndex}
}

// advDoor sends text through the JSON door with the contract's KEYS.
func advDoor(t *testing.T, holder, id, text string) advOutcome {
	t.Helper()
	out := fcallJSON(t, holder, id, text)
	parts := strings.SplitN(out, "\n", 4)
	if parts[0] != "err" {
		return advOutcome{}
	}
	require.GreaterOrEqual(t, len(parts), 3, out)
	i, err := strconv.Atoi(parts[2])
	require.NoError(t, err, out)
	return advOutcome{parts[1], i}
}

// advSlot is what Redis holds for a holder: its hash (but digest and
// created_ms), its events in the slot's outbox, its entries in the slot's
// expiry index, whether id has a record, and how many keys carry its tag.
func advSlot(t *testing.T, holder, id string) string {
	t.Helper()
	ctx := context.Background()
	st := readRaw(t, holder)
	rec, err := rdb.Exists(ctx, cluster.Tx(holder, id)).Result()
	require.NoError(t, err)
	keys := keysOfHolder(t, holder)
	exp := map[string]int64{}
	for m, v := range st.Expiry {
		exp[m] = int64(v)
	}
	return fmt.Sprint(holderHash(t, holder), " events:", len(st.Events), " expiry:", exp, " record:", rec, " keys:", len(keys))
}

// advCase is one instruction with several rules broken at once, written
// twice: {H} is the holder, {A} an amount (1.00 CNY: "1.00" to the engine,
// "100" to the JSON door).
type advCase struct{ name, text string }

// advRun sends each case through both doors, on two fresh holders set up
// alike, and checks that they answer the same code at the same op index and
// that a refusal of the JSON door leaves its holder's slot as it was.
func advRun(t *testing.T, cases []advCase) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	setup := func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "100.00").EarnPoints("50").GrantCoupon("c1", time.Time{}).
			Freeze("CNY", "10.00", "hold1", 0)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("adv-%03d", i)
			if m := advIDRe.FindStringSubmatch(c.text); m != nil && m[1] != "{ID}" {
				require.NoError(t, json.Unmarshal([]byte(`"`+m[1]+`"`), &id))
			}
			he, hd := newHolder(t, setup), newHolder(t, setup)
			te := strings.NewReplacer("{H}", he, "{A}", "1.00", "{ID}", id).Replace(c.text)
			td := strings.NewReplacer("{H}", hd, "{A}", "100", "{ID}", id).Replace(c.text)
			beforeD := advSlot(t, hd, id)
			ge := advEngine(t, te)
			gd := advDoor(t, hd, id, td)
			assert.Equal(t, ge, gd, "engine %+v, JSON door %+v", ge, gd)
			if gd.Code != "" {
				assert.Equal(t, beforeD, advSlot(t, hd, id), "the door's refusal changed the slot")
			}
		})
	}
}

// advIDRe finds an instruction id a case spells itself (the door's KEYS name it).
var advIDRe = regexp.MustCompile(`^\{"id":"([^"]*)"`)

// advOps joins ops into the text of a list.
func advOps(op ...string) string { return strings.Join(op, ",") }

// advTop is an instruction of holder {H}, id {ID}, the top-level members
// extra (if any) and the ops o.
func advTop(extra, o string) string {
	s := `{"id":"{ID}","holder":"{H}"`
	if extra != "" {
		s += "," + extra
	}
	return s + `,"ops":[` + o + `]}`
}

// advWithID is advTop with the id id.
func advWithID(id, extra, o string) string {
	return strings.Replace(advTop(extra, o), `"id":"{ID}"`, `"id":"`+id+`"`, 1)
}

// advMany is n ops, the last of them last.
func advMany(n int, last string) string {
	o := make([]string, n)
	for i := range o {
		o[i] = `{"op":"earn_points","amount":"1"}`
	}
	o[n-1] = last
	return advOps(o...)
}

// An instruction that breaks an op's shape (an unknown field, a field null,
// a field of the wrong JSON type, an amount that is a JSON number, ops that
// is not a list) and also a rule of the instruction (an id, holder or
// counterparty that is no id, a memo with a control character or over 256
// bytes, 65 ops) gets the op's code at the op's index from both doors: the
// engine's decoder reads every op's shape before Normalize judges anything,
// and so does the JSON door (json_shape, then the instruction's rules). The
// JSON door answered the instruction's code before.
func TestJSONDoor_AnOpsShapeIsJudgedBeforeTheInstructionsRules(t *testing.T) {
	needRedis(t)
	advRun(t, []advCase{
		{"an id with braces and an unknown field in an op", advWithID("a{b}", "", `{"op":"earn_points","amount":"1","x":1}`)},
		{"an id with braces and a null field in an op", advWithID("a{b}", "", `{"op":"earn_points","amount":"1","hold":null}`)},
		{"an id with braces and ops an object", `{"id":"a{b}","holder":"{H}","ops":{"a":1}}`},
		{"an id with braces and ops a string", `{"id":"a{b}","holder":"{H}","ops":"x"}`},
		{"an id with a space and an amount as a JSON number", advWithID("a b", "", `{"op":"credit","asset":"CNY","amount":100}`)},
		{"a counterparty with a space and a field of the wrong type", advTop(`"counterparty":"a b"`, `{"op":"earn_points","amount":"1","hold":5}`)},
		{"a memo with a control character and an amount as a JSON number", advTop(`"memo":"a\u0007b"`, `{"op":"credit","asset":"CNY","amount":100}`)},
		{"a memo over 256 bytes and a field of the wrong type", advTop(`"memo":"`+strings.Repeat("m", 257)+`"`, `{"op":"earn_points","amount":"1","hold":5}`)},
		{"65 ops, the last with an amount as a JSON number", advTop("", advMany(65, `{"op":"credit","asset":"CNY","amount":100}`))},
		{"65 ops, the last with an unknown field", advTop("", advMany(65, `{"op":"earn_points","amount":"1","x":1}`))},
		{"an unknown op, then an amount as a JSON number", advTop("", advOps(`{"op":"burn"}`, `{"op":"credit","asset":"CNY","amount":100}`))},
		{"a lower-case asset and an amount as a JSON number", advTop("", `{"op":"credit","asset":"cny","amount":100}`)},
		{"a hold with braces and an amount as a JSON number", advTop("", `{"op":"freeze","asset":"CNY","amount":100,"hold":"{h}"}`)},
		{"a debit without an asset, its amount a JSON number", advTop("", `{"op":"debit","amount":100}`)},
		{"a hold with braces, then a null hold", advTop("", advOps(`{"op":"freeze","asset":"CNY","amount":"{A}","hold":"{h}"}`, `{"op":"credit","asset":"CNY","amount":"{A}","hold":null}`))},
		{"a hold with braces, then an op that is a number", advTop("", advOps(`{"op":"freeze","asset":"CNY","amount":"{A}","hold":"{h}"}`, `5`))},
		{"an unknown op in op 0, an unknown field in op 1", advTop("", advOps(`{"op":"burn"}`, `{"op":"earn_points","amount":"1","x":1}`))},
	})
}

// A memo written with a lone UTF-16 surrogate escape ("\ud800", "\udc00x"),
// which JSON's grammar takes but which is no character, is INVALID_INSTRUCTION
// through both doors. The engine's decoder stored U+FFFD in its place before
// (a memo other than the one sent), where the JSON door refused it.
func TestJSONDoor_AMemoWithALoneSurrogateEscapeIsRefusedByBoth(t *testing.T) {
	needRedis(t)
	advRun(t, []advCase{
		{"a memo of a lone high surrogate", advTop(`"memo":"\ud800"`, `{"op":"earn_points","amount":"1"}`)},
		{"a memo of a lone low surrogate", advTop(`"memo":"\udc00x"`, `{"op":"earn_points","amount":"1"}`)},
		{"a high surrogate followed by no low one", advTop(`"memo":"\ud83d\u0041"`, `{"op":"earn_points","amount":"1"}`)},
	})
	in, err := instructions.Decode([]byte(`{"id":"i","holder":"h","memo":"\ud83d\ude00","ops":[{"op":"earn_points","amount":"1"}]}`))
	require.NoError(t, err, "a pair is a character")
	assert.Equal(t, "\U0001F600", in.Memo)
}

// A null amount is a shape error of its op (INVALID_AMOUNT), and a ttl_ms,
// expires_ms or lanes written with a fraction or an exponent (1.5, 1e3, 1.0)
// is refused with its op's shape, through both doors, ahead of the
// instruction's rules and of later ops. The JSON door judged a null amount
// after the instruction's rules and the op's own (UNKNOWN_ASSET, "takes no
// amount"), and such a number over the whole text, at op index -1, before
// an empty counterparty (INVALID_INSTRUCTION where the engine says
// INVALID_ID).
func TestJSONDoor_ANullAmountAndAFractionAreJudgedWithTheirOpsShape(t *testing.T) {
	needRedis(t)
	freezeQ := func(ttl string) string {
		return `{"op":"freeze_points","amount":"1","hold":"q` + ttl[:1] + `","ttl_ms":` + ttl + `}`
	}
	advRun(t, []advCase{
		{"suspend with a null amount", advTop("", `{"op":"suspend","amount":null}`)},
		{"a memo with a control character and a null amount", advTop(`"memo":"a\u0007b"`, `{"op":"earn_points","amount":null}`)},
		{"a lower-case asset and a null amount", advTop("", `{"op":"debit","asset":"cny","amount":null}`)},
		{"an empty counterparty and a ttl_ms with a fraction", advTop(`"counterparty":""`, freezeQ("1.5"))},
		{"an empty counterparty and a ttl_ms with an exponent", advTop(`"counterparty":""`, freezeQ("1e3"))},
		{"an id with braces and a ttl_ms of 1.0", advWithID("a{b}", "", freezeQ("1.0"))},
		{"an unknown field in op 0, a ttl_ms with an exponent in op 1", advTop("", advOps(`{"op":"earn_points","amount":"1","x":1}`, freezeQ("1e3")))},
		{"a whole ttl_ms in op 0, one with an exponent in op 1", advTop("", advOps(freezeQ("5000"), freezeQ("6E3")))},
		{"an expires_ms with an exponent in op 1", advTop("", advOps(`{"op":"earn_points","amount":"1"}`, `{"op":"grant_coupon","coupon":"c9","expires_ms":2E12}`))},
		{"lanes with a fraction in op 2", advTop("", advOps(`{"op":"earn_points","amount":"1"}`, `{"op":"earn_points","amount":"1"}`, `{"op":"set_lanes","lanes":4.0}`))},
		{"a ttl_ms with a fraction in op 0, a null amount in op 1", advTop("", advOps(freezeQ("2.5"), `{"op":"credit","asset":"CNY","amount":null}`))},
		{"a null amount in op 0, a ttl_ms with a fraction in op 1", advTop("", advOps(`{"op":"credit","asset":"CNY","amount":null}`, freezeQ("2.5")))},
	})
}
