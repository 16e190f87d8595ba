package bench

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// median of xs (0 for none); xs is left as it was.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile p (0..100) of sorted xs, nearest rank.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}

// cmdStat is one line of INFO commandstats.
type cmdStat struct {
	Calls int64
	Usec  int64
}

// parseCommandStats reads the body of INFO commandstats:
//
//	cmdstat_evalsha:calls=10,usec=250,usec_per_call=25.00,rejected_calls=0,failed_calls=0
//
// into command name -> calls and usec. Subcommands keep their "|" name.
func parseCommandStats(info string) map[string]cmdStat {
	out := map[string]cmdStat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		name, ok = strings.CutPrefix(name, "cmdstat_")
		if !ok {
			continue
		}
		var st cmdStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				st.Calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.Usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[name] = st
	}
	return out
}

// commandStats sums INFO commandstats over the masters.
func (e *env) commandStats(ctx context.Context) (map[string]cmdStat, error) {
	total := map[string]cmdStat{}
	err := e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "commandstats").Result()
		if err != nil {
			return err
		}
		for k, v := range parseCommandStats(info) {
			t := total[k]
			t.Calls += v.Calls
			t.Usec += v.Usec
			total[k] = t
		}
		return nil
	})
	return total, err
}
