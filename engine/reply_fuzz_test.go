package engine

import (
	"errors"
	"testing"

	"github.com/atomledger/atomledger/instructions"
)

// The script's replies are parsed in one place; whatever comes back, that
// place answers a Result or an *Error, and never panics.
func FuzzParseReply(f *testing.F) {
	f.Add(int64(0), `ok
{"s":"2","st":"active","b":{"CNY":["12000","3000"]},"p":["3000","2000"],"c":{"c-9":"held:o|1796000000000"},"h":{"o":"1796000000000|CNY=3000,points=2000|c-9"}}`)
	f.Add(int64(1), "err\nINSUFFICIENT_FUNDS\n0\n1200")
	f.Add(int64(0), "err\nOVERFLOW\n0\nCNY:9007199254740991")
	f.Add(int64(0), "err\nIDEMPOTENCY_CONFLICT\n-1\n")
	f.Add(int64(0), "err\nEXCEEDS_HOLD\n7\n")
	f.Add(int64(2), "ok\n{}")
	e := New(nil, nil)
	n, err := instructions.New("i", "h").Debit("CNY", "1").SettleLeg("o", "points", "5").Normalize(e.assets)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, replayed int64, outcome string) {
		res, err := e.parseReply(n, []any{replayed, outcome})
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("%T is not an *Error", err)
			}
			return
		}
		if res.ID != "i" || res.Holder != "h" {
			t.Fatalf("result of another instruction: %+v", res)
		}
	})
}
