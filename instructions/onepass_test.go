package instructions

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bodies the one-pass decoder must read itself: the requests clients send.
var onePassBodies = []string{
	`{"id":"order-55-pay","holder":"u1001","ops":[{"op":"debit","asset":"CNY","amount":"80.00"}]}`,
	"{\n  \"id\": \"order-55-pay\", \"holder\": \"u1001\", \"counterparty\": \"merchant:88\", \"memo\": \"checkout order 55, café\",\r\n" +
		"\t\"ops\": [ {\"op\": \"debit\", \"asset\": \"CNY\", \"amount\": \"80.00\"} , {\"op\": \"spend_points\", \"amount\": \"2000\"},\n" +
		"    {\"op\": \"redeem_coupon\", \"coupon\": \"c-9\"} ] }\n",
	`{"ops":[{"op":"freeze","asset":"BTC","amount":"0.1","hold":"o","ttl_ms":60000}],"holder":"h","id":"a"}`,
	`{"id":"a","holder":"h","ops":[{"op":"grant_coupon","coupon":"c","expires_ms":1796000000000},{"op":"grant_coupon","coupon":"d","expires_ms":0}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"settle","hold":"o","leg":"points","amount":"5"},{"op":"release","hold":"p"}]}`,
	`{"id":"a","holder":"h","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"o","ttl_ms":-5}]}`,      // Validate refuses it, Decode reads it
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":"1","ttl_ms":999999999999999999}]}`, // 18 digits
	`{"id":"","holder":"h","ops":[{"op":"steal"},{"op":"open"}]}`,
	"{\"id\":\"a\",\"holder\":\"h\",\"ops\":[{\"op\":\"open\"}],\"memo\":\"<&> \x7f\"}",
	`{"id":"a","holder":"h","ops":[{"op":"open","lanes":4},{"op":"set_lanes","lanes":-7},{"op":"credit","lanes":999999999999999999}]}`,
}

// Transfer bodies the one-pass decoder must read itself.
var onePassTransfers = []string{
	`{"id":"pay-1","parts":[{"holder":"alice","ops":[{"op":"debit","asset":"CNY","amount":"10.00"}]},{"holder":"bob","ops":[{"op":"credit","asset":"CNY","amount":"10.00"}]}]}`,
	" {\"parts\": [{\"ops\": [{\"op\": \"settle\", \"hold\": \"o\", \"leg\": \"USDT\", \"amount\": \"10\"}, {\"op\": \"credit\", \"asset\": \"BTC\", \"amount\": \"0.0001\"}], \"holder\": \"buyer\"},\n" +
		"  {\"holder\": \"seller\", \"ops\": [{\"op\": \"settle\", \"hold\": \"s\"}]}], \"id\": \"trade-1\"} ",
}

// Bodies the one-pass decoder must leave to the strict one, each for one
// reason it has to: what it would read of them differs, or they are wrong.
var strictBodies = []string{
	`{"id":"a","holder":"h","ops":[{"op":"open"}]} {}`,                              // trailing data
	`{"id":"a","holder":"h","ops":[{"op":"open"}]}x`,                                // trailing data
	`{"id":"a","id":"b","holder":"h","ops":[{"op":"open"}]}`,                        // a duplicate key
	`{"ID":"a","holder":"h","ops":[{"op":"open"}]}`,                                 // another case
	`{"id":"a","holder":"h","extra":1,"ops":[{"op":"open"}]}`,                       // an unknown key
	`{"id":"a","holder":"h","ops":[{"op":"open","Op":"credit"}]}`,                   // another case in an op
	`{"id":"a","holder":"h","ops":[{"op":"credit","amount":"1","amount":"2"}]}`,     // a duplicate op key
	`{"i\u0064":"a","holder":"h","ops":[{"op":"open"}]}`,                            // an escaped key
	`{"id":"a\u0062","holder":"h","ops":[{"op":"open"}]}`,                           // an escape
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":"1\/2"}]}`, // an escape the amount refuses
	"{\"id\":\"a\tb\",\"holder\":\"h\",\"ops\":[{\"op\":\"open\"}]}",                // a control character
	`{"id":null,"holder":"h","ops":[{"op":"open"}]}`,                                // null
	`{"id":"a","holder":"h","memo":null,"ops":[{"op":"open"}]}`,                     // null
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":null}]}`,   // null
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":""}]}`,     // empty
	`{"id":"a","holder":"h","ops":[{"op":"settle","hold":"o","leg":""}]}`,           // empty
	`{"id":"a","holder":"h","ops":[{"op":""}]}`,                                     // empty
	`{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":80}]}`,     // a number
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":"5"}]}`,                    // a string
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":1.5}]}`,                    // a fraction
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":1e3}]}`,                    // an exponent
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":-0}]}`,                     // minus zero
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":01}]}`,                     // a leading zero
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":+1}]}`,                     // a plus
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":-}]}`,                      // no digits
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":9223372036854775808}]}`,    // overflow
	`{"id":"a","holder":"h","ops":[{"op":"open","ttl_ms":1234567890123456789}]}`,    // 19 digits
	`{"id":"a","holder":"h","ops":[{"op":"set_lanes","lanes":"3"}]}`,                // a string
	`{"id":"a","holder":"h","ops":[{"op":"set_lanes","lanes":3.0}]}`,                // a fraction
	`{"id":"a","holder":"h","ops":[{"op":"set_lanes","lanes":1e1}]}`,                // an exponent
	`{"id":"a","holder":"h","ops":[{"op":"set_lanes","lanes":null}]}`,               // null
	`{"id":"a","holder":"h","ops":[{"op":"set_lanes","lanes":3,"lanes":4}]}`,        // a duplicate op key
	`{"id":"a","holder":"h","ops":[]}`,                                              // no ops
	`{"id":"a","holder":"h","ops":null}`,                                            // no ops
	`{"id":"a","holder":"h"}`,                                                       // no ops
	`{"id":"a","holder":"h","ops":[{}]}`,                                            // an empty op
	`{"id":"a","holder":"h","ops":[{"op":"open"},]}`,                                // a trailing comma
	`{"id":"a","holder":"h","ops":[{"op":"open"}],}`,                                // a trailing comma
	`{"id":"a","holder":"h","ops":[{"op":"open"}]`,                                  // cut short
	`{"id":"a","holder":"h","ops":[{"op":"open"}`,                                   // cut short
	`{"id":"a","holder":"h","ops":[{"op":"open"} {"op":"open"}]}`,                   // no comma
	`{"id":"a","holder":"h","ops":[["open"]]}`,                                      // not an object
	"\ufeff{\"id\":\"a\",\"holder\":\"h\",\"ops\":[{\"op\":\"open\"}]}",             // a byte-order mark
	"{\"id\":\"a\",\"holder\":\"h\",\"memo\":\"\xff\",\"ops\":[{\"op\":\"open\"}]}", // invalid UTF-8
	`{"id":"a","holder":"h","memo":"` + strings.Repeat("x", MaxPayload) + `","ops":[{"op":"open"}]}`,
	`{}`, `[]`, `null`, `""`, ``, ` `, `{`, `}`,
}

// Transfer bodies the one-pass decoder must leave to the strict one.
var strictTransfers = []string{
	`{"id":"t","parts":[]}`,
	`{"id":"t"}`,
	`{"id":"t","parts":[{"holder":"a","ops":[]}]}`,
	`{"id":"t","parts":[{"holder":"a"}]}`,
	`{"id":"t","parts":[{"holder":"a","holder":"b","ops":[{"op":"open"}]}]}`,
	`{"id":"t","parts":[{"holder":"a","ops":[{"op":"open"}],"memo":"m"}]}`,
	`{"id":"t","parts":[{"holder":null,"ops":[{"op":"open"}]}]}`,
	`{"id":"t","id":"u","parts":[{"holder":"a","ops":[{"op":"open"}]}]}`,
	`{"id":"t","parts":[{"holder":"a","ops":[{"op":"credit","amount":7}]}]}`,
	`{"id":"t","parts":[{"holder":"a","ops":[{"op":"open"}]}]} 1`,
}

// TestDecode_OnePassReadsTheCommonRequests: the requests clients send are
// read in one pass, into what the strict decoder reads.
func TestDecode_OnePassReadsTheCommonRequests(t *testing.T) {
	for _, body := range onePassBodies {
		in, ok := decodeOnePass([]byte(body))
		require.True(t, ok, "the one-pass decoder refused %s", body)
		want, err := decodeStrictly([]byte(body))
		require.NoError(t, err, body)
		assert.Equal(t, want, in, body)
	}
	for _, body := range onePassTransfers {
		tr, ok := decodeTransferOnePass([]byte(body))
		require.True(t, ok, "the one-pass decoder refused %s", body)
		want, err := decodeTransferStrictly([]byte(body))
		require.NoError(t, err, body)
		assert.Equal(t, want, tr, body)
	}
}

// TestDecode_OnePassLeavesTheRestToTheStrictDecoder: what is wrong, or read
// differently by the strict decoder, is never read in one pass, so Decode
// answers it as the strict decoder does.
func TestDecode_OnePassLeavesTheRestToTheStrictDecoder(t *testing.T) {
	for _, body := range strictBodies {
		_, ok := decodeOnePass([]byte(body))
		assert.False(t, ok, "the one-pass decoder read %s", body)
		in, err := Decode([]byte(body))
		want, wantErr := decodeStrictly([]byte(body))
		assert.Equal(t, want, in, body)
		assert.Equal(t, wantErr, err, body)
	}
	for _, body := range strictTransfers {
		_, ok := decodeTransferOnePass([]byte(body))
		assert.False(t, ok, "the one-pass decoder read %s", body)
		tr, err := DecodeTransfer([]byte(body))
		want, wantErr := decodeTransferStrictly([]byte(body))
		assert.Equal(t, want, tr, body)
		assert.Equal(t, wantErr, err, body)
	}
}

// TestDecode_Allocations: a one-op debit costs the copy of the body and the
// op list, not a walk of its own per key and per op.
func TestDecode_Allocations(t *testing.T) {
	body := []byte(onePassBodies[0])
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Decode(body); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 2.0)
}

// FuzzDecode_OnePassAgrees: whatever the one-pass decoder reads, the strict
// decoder reads the same, instruction or transfer.
func FuzzDecode_OnePassAgrees(f *testing.F) {
	for _, b := range onePassBodies {
		f.Add([]byte(b))
	}
	for _, b := range strictBodies {
		if len(b) < 1024 { // the fuzzer's time goes to mutating small bodies
			f.Add([]byte(b))
		}
	}
	for _, b := range append(onePassTransfers, strictTransfers...) {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if in, ok := decodeOnePass(data); ok {
			want, err := decodeStrictly(data)
			require.NoError(t, err, "the one-pass decoder read %q", data)
			require.Equal(t, want, in, "%q", data)
		}
		if tr, ok := decodeTransferOnePass(data); ok {
			want, err := decodeTransferStrictly(data)
			require.NoError(t, err, "the one-pass decoder read %q", data)
			require.Equal(t, want, tr, "%q", data)
		}
	})
}
