package bench

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/lua"
	"github.com/atomledger/atomledger/stored"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat
// (sysconf(_SC_CLK_TCK), which Go cannot ask without cgo): 100 on x86 and
// arm64 whatever the kernel's own HZ.
const clockTicks = 100

// procStat reads the parent pid, the CPU time (user + system) of a process
// and that of its children it has waited for, from the text of
// /proc/<pid>/stat. The command name, in parentheses, may hold spaces and
// parentheses itself: the fields are counted from the last ')'.
func procStat(stat string) (ppid int, cpu, reaped time.Duration, err error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, 0, fmt.Errorf("not a /proc stat line: %.40q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime
	// 16, cstime 17.
	if len(f) < 15 {
		return 0, 0, 0, fmt.Errorf("a /proc stat line of %d fields", len(f)+2)
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, 0, fmt.Errorf("a /proc stat line with a bad parent: %w", err)
	}
	var ticks [4]int64
	for j := range ticks {
		if ticks[j], err = strconv.ParseInt(f[11+j], 10, 64); err != nil {
			return 0, 0, 0, fmt.Errorf("a /proc stat line with bad times: %w", err)
		}
	}
	tick := func(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }
	return ppid, tick(ticks[0] + ticks[1]), tick(ticks[2] + ticks[3]), nil
}

// readProc reads procStat of pid ("self" for this process).
func readProc(pid string) (ppid int, cpu, reaped time.Duration, err error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, 0, err
	}
	return procStat(string(b))
}

func parentOf(pid int) (int, error) {
	ppid, _, _, err := readProc(strconv.Itoa(pid))
	return ppid, err
}

// treeCPU is the CPU time of pid and of its children: those that run now,
// and those that exited, which the kernel adds to the parent's cutime and
// cstime once it has waited for them (the postmaster reaps its backends and
// autovacuum workers, Redis its AOF rewrite). So a child that exits within
// a phase keeps counting; a grandchild counts only while it runs.
func treeCPU(pid int) (time.Duration, error) {
	_, total, reaped, err := readProc(strconv.Itoa(pid))
	if err != nil {
		return 0, err
	}
	total += reaped
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, d := range ents {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		ppid, cpu, _, err := readProc(d.Name())
		if err == nil && ppid == pid { // an error: it exited meanwhile
			total += cpu
		}
	}
	return total, nil
}

// sysSample is what a phase's window starts and ends with.
type sysSample struct {
	at                              time.Time
	daemon, redis, postgres, client time.Duration
	redisUsed                       float64 // used_cpu_sys + used_cpu_user, seconds, over the masters
	cmds                            map[string]cmdStat
	pgBytes                         int64
	pgWAL                           int64   // bytes of WAL PostgreSQL has written since it began
	relayed                         float64 // the daemon's atomledger_relay_events_total
}

func (r *sysRun) sample(ctx context.Context) (sysSample, error) {
	s := sysSample{at: time.Now(), cmds: map[string]cmdStat{}}
	var err error
	if _, s.daemon, _, err = readProc(strconv.Itoa(r.d.cmd.Process.Pid)); err != nil {
		return s, fmt.Errorf("daemon: %w", err)
	}
	for _, pid := range r.redis {
		cpu, err := treeCPU(pid)
		if err != nil {
			return s, fmt.Errorf("redis-server: %w", err)
		}
		s.redis += cpu
	}
	if s.postgres, err = treeCPU(r.pgPID); err != nil {
		return s, fmt.Errorf("postgres: %w", err)
	}
	// The bench's own: its children are the servers, counted above.
	if _, s.client, _, err = readProc("self"); err != nil {
		return s, err
	}
	err = r.e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "cpu", "commandstats").Result()
		if err != nil {
			return err
		}
		used, err := usedCPU(info)
		if err != nil {
			return err
		}
		s.redisUsed += used
		for name, st := range parseCommandStats(info) {
			sum := s.cmds[name]
			sum.Calls += st.Calls
			sum.Usec += st.Usec
			s.cmds[name] = sum
		}
		return nil
	})
	if err != nil {
		return s, err
	}
	err = r.pg.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'ledger' AND c.relkind IN ('r', 'm')`).Scan(&s.pgBytes)
	if err != nil {
		return s, fmt.Errorf("ledger size: %w", err)
	}
	if err = r.pg.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&s.pgWAL); err != nil {
		return s, fmt.Errorf("WAL position: %w", err)
	}
	s.relayed, err = r.d.metric(ctx, "atomledger_relay_events_total")
	return s, err
}

// costs fills a phase's figures per 1,000 operations from its window.
func (r *sysRun) costs(p *SystemPhase, a, b sysSample) {
	p.CPUPer1000, p.Cores = procCPU(a, b, p.Ops)
	p.RedisUsedCPUPer1000 = round((b.redisUsed - a.redisUsed) * 1000 / float64(p.Ops))
	p.RedisUsecPer1000, p.RedisCallsPerOp = splitCommands(commandDelta(a.cmds, b.cmds), b.redisUsed-a.redisUsed, float64(p.Ops), r.familyOf)
	p.PGBytesPerOp = round(float64(b.pgBytes-a.pgBytes) / float64(p.Ops))
	p.PGWALPerOp = round(float64(b.pgWAL-a.pgWAL) / float64(p.Ops))
	p.EventsPerOp = round((b.relayed - a.relayed) / float64(p.Ops))
}

// procCPU is each process's CPU between samples a and b: seconds per 1,000
// of ops, and cores busy.
func procCPU(a, b sysSample, ops int64) (per1000, cores ProcCPU) {
	per := func(d time.Duration) float64 { return round(d.Seconds() * 1000 / float64(ops)) }
	busy := func(d time.Duration) float64 { return round(d.Seconds() / b.at.Sub(a.at).Seconds()) }
	daemon, rds, pg, client := b.daemon-a.daemon, b.redis-a.redis, b.postgres-a.postgres, b.client-a.client
	all := daemon + rds + pg + client
	return ProcCPU{Daemon: per(daemon), Redis: per(rds), Postgres: per(pg), Client: per(client), All: per(all)},
		ProcCPU{Daemon: busy(daemon), Redis: busy(rds), Postgres: busy(pg), Client: busy(client), All: busy(all)}
}

// commandDelta is b - a, command by command.
func commandDelta(a, b map[string]cmdStat) map[string]cmdStat {
	out := map[string]cmdStat{}
	for name, st := range b {
		d := cmdStat{Calls: st.Calls - a[name].Calls, Usec: st.Usec - a[name].Usec}
		if d.Calls != 0 || d.Usec != 0 {
			out[name] = d
		}
	}
	return out
}

// Families of Redis commands the system part splits Redis's time into.
const (
	famScript   = "fcall"         // FCALL and EVALSHA: the scripts, with every command they call
	famRead     = "relay_read"    // the relay's reads (XRANGE; XREADGROUP, XAUTOCLAIM by a relay of a consumer group)
	famRemove   = "relay_remove"  // the relay's removals of what the ledger has (XTRIM; XACK, XDEL by a relay of a consumer group)
	famWait     = "wait"          // WAIT for replicas
	famTracking = "client"        // CLIENT TRACKING and the other CLIENT subcommands
	famRecovery = "zrangebyscore" // the recovery worker's and the sweeper's reads of the due indexes
	famOther    = "other"         // every other command called from outside a script
	famOutside  = "outside_commands"
	famUsedCPU  = "used_cpu"
)

// commandFamilies returns the family of a command name as commandstats
// writes it, or "" for a command that scripts call: commandstats counts
// those once in the script's FCALL and once on their own, and the first is
// the one kept. The commands scripts call are read from the scripts
// themselves (the library and the seed's deduct), so that the split
// follows the library as it changes.
func commandFamilies() func(string) string {
	inScripts := map[string]bool{}
	for _, m := range regexp.MustCompile(`'([A-Z]+)'`).FindAllStringSubmatch(lua.Library.Source+seedDeduct, -1) {
		inScripts[strings.ToLower(m[1])] = true
	}
	return func(name string) string {
		switch {
		case name == "fcall" || name == "fcall_ro" || name == "evalsha" || name == "evalsha_ro" || name == "eval" || name == "eval_ro":
			return famScript
		case name == "xrange" || name == "xreadgroup" || name == "xautoclaim":
			return famRead
		case name == "xtrim" || name == "xack" || name == "xdel":
			return famRemove
		case name == "wait":
			return famWait
		case name == "client" || strings.HasPrefix(name, "client|"):
			return famTracking
		case name == "zrangebyscore":
			return famRecovery
		case inScripts[name]:
			return ""
		}
		return famOther
	}
}

// splitCommands is Redis's time per 1,000 of ops operations by family, in
// µs: each family's commandstats usec, and outside_commands, what INFO's
// used_cpu_sys + used_cpu_user (usedSec) has beyond them (reading and
// writing the clients' sockets, the event loop, the AOF), with used_cpu
// itself; and each family's calls per operation.
func splitCommands(delta map[string]cmdStat, usedSec, ops float64, familyOf func(string) string) (usecPer1000, callsPerOp map[string]float64) {
	usec, calls := map[string]float64{}, map[string]float64{}
	var inCommands float64
	for name, st := range delta {
		f := familyOf(name)
		if f == "" {
			continue
		}
		usec[f] += float64(st.Usec)
		calls[f] += float64(st.Calls)
		inCommands += float64(st.Usec)
	}
	usec[famOutside] = usedSec*1e6 - inCommands
	usec[famUsedCPU] = usedSec * 1e6
	usecPer1000, callsPerOp = map[string]float64{}, map[string]float64{}
	for f, u := range usec {
		usecPer1000[f] = round(u * 1000 / ops)
	}
	for f, n := range calls {
		callsPerOp[f] = round(n / ops)
	}
	return usecPer1000, callsPerOp
}

// moneyCheck compares, per asset, what was put into the holders with what
// they hold (available and frozen, "points" for points) plus what left
// them. uncertain instructions (no answer, or a server error) may have
// applied or not: a difference is then no proof of a loss.
func moneyCheck(put, left map[string]int64, snaps []*stored.Snapshot, uncertain int64) MoneyCheck {
	held := map[string]int64{}
	for _, s := range snaps {
		for asset, b := range s.Balances {
			held[asset] += b[0] + b[1]
		}
		if s.Points != nil {
			held["points"] += s.Points[0] + s.Points[1]
		}
	}
	out := MoneyCheck{Exact: true, Holders: len(snaps), Uncertain: uncertain}
	assets := slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range []map[string]int64{put, held, left} {
			for a := range m {
				if !seen[a] && !yield(a) {
					return
				}
				seen[a] = true
			}
		}
	})
	for _, a := range assets {
		s := AssetSum{Asset: a, PutIn: put[a], Held: held[a], LeftOut: left[a]}
		s.Diff = s.Held + s.LeftOut - s.PutIn
		if s.Diff != 0 {
			out.Exact = false
		}
		out.Assets = append(out.Assets, s)
	}
	return out
}

// systemRatios relates the phases' rates.
func systemRatios(ps []SystemPhase) SystemRatios {
	rate := map[string]float64{}
	for _, p := range ps {
		rate[p.Name] = p.PerSec
	}
	out := SystemRatios{ToFloor: map[string]float64{}}
	for _, p := range ps {
		if p.Name != phaseFloor {
			out.ToFloor[p.Name] = round(ratio(p.PerSec, rate[phaseFloor]))
		}
	}
	out.P2POverDebit = round(ratio(rate[phaseP2P], rate[phaseDebit]))
	out.HoldSettleOverDebit = round(ratio(rate[phaseHoldSettle], rate[phaseDebit]))
	return out
}
