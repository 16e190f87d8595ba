package bench

import "fmt"

// targets checks the goals against a report.
func targets(r *Report) []Target {
	var out []Target
	add := func(skipped string, name, want string, got float64, met bool, note string) {
		t := Target{Name: name, Want: want, Got: got, Met: met && skipped == "", Note: note}
		if skipped != "" {
			t.Skip, t.Note = true, skipped
		}
		out = append(out, t)
	}
	sc := r.ScriptCost
	add(sc.Skipped, "script_cost.ratio", "<= 6.0", sc.Ratio, sc.Ratio > 0 && sc.Ratio <= 6, "")
	add(sc.Skipped, "script_cost.debit_ratio", "<= 4.0", sc.DebitRatio, sc.DebitRatio > 0 && sc.DebitRatio <= 4, "")
	add(r.Pipeline.Skipped, "pipeline.ratio", ">= 0.85", r.Pipeline.Ratio, r.Pipeline.Ratio >= 0.85, "")
	add(r.Concurrent.Skipped, "concurrent.ratio", ">= 0.85", r.Concurrent.Ratio, r.Concurrent.Ratio >= 0.85, "")
	h := r.HTTP
	add(h.Skipped, "http.ratio_to_library", ">= 0.5", h.RatioToLibrary, h.RatioToLibrary >= 0.5, "")
	add(h.Skipped, "http.p99_ms at half load", "<= 5", h.P99Ms, h.PerSec > 0 && h.P99Ms <= 5, "")
	c := r.Contention
	add(c.Skipped, "contention.lua per_sec / watch per_sec", ">= 5", c.LuaVsWatch, c.LuaVsWatch >= 5, "")
	lost := c.Lua.Lost + c.Lock.Lost + c.Watch.Lost
	add(c.Skipped, "contention lost (lua + lock + watch)", "0", float64(lost), c.Lua.Ok > 0 && c.Lua.Lost == 0 && c.Lock.Lost == 0 && c.Watch.Lost == 0,
		fmt.Sprintf("lua %d, lock %d, watch %d", c.Lua.Lost, c.Lock.Lost, c.Watch.Lost))
	add(c.Skipped, "contention getset lost", "> 0 (the race shows)", float64(c.GetSet.Lost), c.GetSet.Lost > 0, "")
	m := r.Memory
	add(m.Skipped, "memory.bytes_per_holder", "<= 600", m.BytesPerHolder, m.BytesPerHolder > 0 && m.BytesPerHolder <= 600,
		fmt.Sprintf("%.0f with the idempotency record and the outbox event", m.WithTransient))
	add(m.Skipped, "memory.tx_record_bytes", "<= 160", m.TxRecord, m.TxRecord > 0 && m.TxRecord <= 160, "")
	rl := r.Relay
	note := fmt.Sprintf("held %.0f s (the issue asks 60 s: --relay-duration 60s)", rl.Seconds)
	add(rl.Skipped, "relay.lag_p99_ms at the sustained rate", "< 1000", rl.LagP99Ms, rl.SustainedPerSec > 0 && rl.LagP99Ms < 1000, note)
	return out
}
