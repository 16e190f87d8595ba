package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestZZExplore(t *testing.T) {
	needRedis(t)
	d := startServe(t, nil)
	h := richHolder(t, d)
	show := func(name string, a reply) { fmt.Printf("== %s: %d %.400s\n", name, a.status, a.body) }
	body := instructionJSON(newID("pad"), h, `[{"op": "earn_points", "amount": "1"}]`)
	show("100KiB padded", d.post(t, strings.Replace(body, "{", "{"+strings.Repeat(" ", 100<<10), 1)))
	show("1MiB-1 padded", d.post(t, strings.Replace(body, "{", "{"+strings.Repeat(" ", 1<<20-len(body)-1), 1)))
	show("padded memo 200KiB body", d.post(t, strings.Replace(instructionJSON(newID("pad"), h, `[{"op": "earn_points", "amount": "1"}]`), "{", "{"+strings.Repeat("\n", 200<<10), 1)))
	id := newID("ok")
	show("apply", d.post(t, instructionJSON(id, h, `[{"op": "earn_points", "amount": "1"}]`)))
	show("get applied", d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/"+id, ""))
	rej := newID("rej")
	show("reject", d.post(t, instructionJSON(rej, h, `[{"op": "debit", "asset": "CNY", "amount": "1000.00"}]`)))
	show("get rejected", d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/"+rej, ""))
	val := newID("val")
	show("invalid", d.post(t, instructionJSON(val, h, `[{"op": "debit", "asset": "CNY", "amount": "1.001"}]`)))
	show("get invalid", d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/"+val, ""))
	ghost := newID("ghost")
	gid := newID("g")
	show("unknown holder", d.post(t, instructionJSON(gid, ghost, `[{"op": "credit", "asset": "CNY", "amount": "1.00"}]`)))
	show("get unknown holder's", d.do(t, http.MethodGet, "/v1/holders/"+ghost+"/instructions/"+gid, ""))
	show("empty body", d.post(t, ""))
	show("null body", d.post(t, "null"))
	show("array body", d.post(t, "[]"))
	show("trailing", d.post(t, instructionJSON(newID("tr"), h, `[{"op": "earn_points", "amount": "1"}]`)+" {}"))
	show("get instructions", d.do(t, http.MethodGet, "/v1/instructions", ""))
	show("batch with a bad entry", d.do(t, http.MethodPost, "/v1/instructions/batch", `{"instructions": [`+instructionJSON(newID("b"), h, `[{"op": "earn_points", "amount": "1"}]`)+`, `+instructionJSON(newID("b"), h, `[{"op": "earn_points", "amount": "1.5"}]`)+`, {"id": 5}]}`))
	show("batch empty", d.do(t, http.MethodPost, "/v1/instructions/batch", `{"instructions": []}`))
	show("get transfer unknown", d.do(t, http.MethodGet, "/v1/transfers/"+newID("none"), ""))
	show("holder of dots", d.do(t, http.MethodGet, "/v1/holders/..", ""))
	show("json number amount", d.post(t, instructionJSON(newID("n"), h, `[{"op": "credit", "asset": "CNY", "amount": 1}]`)))
	show("dup key", d.post(t, `{"id": "`+newID("d")+`", "holder": "`+h+`", "holder": "x", "ops": [{"op": "earn_points", "amount": "1"}]}`))
	show("state", d.do(t, http.MethodGet, "/v1/holders/"+h, ""))
}
