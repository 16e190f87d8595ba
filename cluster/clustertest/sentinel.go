package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
)

// SentinelOptions configure StartSentinel. A zero field means its default.
type SentinelOptions struct {
	// MasterName is the name the sentinels monitor the master under.
	// Default "atomledger".
	MasterName string
	// Sentinels is the number of sentinel processes; the quorum is a
	// majority of them. Default 3.
	Sentinels int
	// RedisServer and RedisSentinel are the paths of the binaries. Default:
	// "redis-server" and "redis-sentinel" looked up on PATH.
	RedisServer, RedisSentinel string
	// DownAfter is how long a master must not answer before the sentinels
	// call it down. Default 1s.
	DownAfter time.Duration
	// TLS, if set, makes the servers and the sentinels speak TLS only, as
	// Options.TLS does for a cluster.
	TLS *TLS
}

// Sentinel is a master, one replica and a group of sentinels watching them,
// all real processes on free ports of 127.0.0.1, in a temporary directory.
type Sentinel struct {
	MasterName string
	// Servers are the master (first) and its replica, as started: after a
	// failover the roles change, see MasterAddr.
	Servers []*Node
	// Sentinels are the sentinel processes.
	Sentinels []*Node

	dir      string
	mu       sync.Mutex // guards proc and rdb of every node, and stopped
	stopped  bool
	stopOnce sync.Once
	stopErr  error
}

// StartSentinel starts a master, its replica and opt.Sentinels sentinels, and
// returns once the replica is in sync and every sentinel knows the replica
// and every other sentinel. The deadline of ctx bounds the whole start; on
// any failure everything started so far is stopped again.
func StartSentinel(ctx context.Context, opt SentinelOptions) (_ *Sentinel, err error) {
	if opt.MasterName == "" {
		opt.MasterName = "atomledger"
	}
	if opt.Sentinels == 0 {
		opt.Sentinels = 3
	}
	if opt.DownAfter == 0 {
		opt.DownAfter = time.Second
	}
	server, err := exec.LookPath(orDefault(opt.RedisServer, "redis-server"))
	if err != nil {
		return nil, fmt.Errorf("start sentinel: %w", err)
	}
	sentinel, err := exec.LookPath(orDefault(opt.RedisSentinel, "redis-sentinel"))
	if err != nil {
		return nil, fmt.Errorf("start sentinel: %w", err)
	}
	s := &Sentinel{MasterName: opt.MasterName}
	if s.dir, err = os.MkdirTemp("", "atomledger-sentinel-"); err != nil {
		return nil, fmt.Errorf("start sentinel: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop())
		}
	}()

	// The cluster harness's node start, with cluster mode off.
	c := &Cluster{dir: s.dir, tls: opt.TLS}
	master, err := c.startNode(ctx, server, []string{"cluster-enabled no"})
	if err != nil {
		return nil, fmt.Errorf("start sentinel: master: %w", err)
	}
	s.Servers = append(s.Servers, master)
	replica, err := c.startNode(ctx, server, []string{"cluster-enabled no", fmt.Sprintf("replicaof 127.0.0.1 %d", master.Port)})
	if err != nil {
		return nil, fmt.Errorf("start sentinel: replica: %w", err)
	}
	s.Servers = append(s.Servers, replica)

	quorum := opt.Sentinels/2 + 1
	for range opt.Sentinels {
		n, err := startSentinelNode(ctx, s.dir, sentinel, opt.TLS, []string{
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d %d", opt.MasterName, master.Port, quorum),
			fmt.Sprintf("sentinel down-after-milliseconds %s %d", opt.MasterName, opt.DownAfter.Milliseconds()),
			// The least Sentinel allows between two failover attempts of the
			// same master: a failed attempt is retried soon.
			fmt.Sprintf("sentinel failover-timeout %s %d", opt.MasterName, 3*opt.DownAfter.Milliseconds()),
			fmt.Sprintf("sentinel parallel-syncs %s 1", opt.MasterName),
		})
		if err != nil {
			return nil, fmt.Errorf("start sentinel: %w", err)
		}
		s.Sentinels = append(s.Sentinels, n)
	}

	err = poll(ctx, "wait for the sentinels", func(ctx context.Context) error {
		info, err := s.admin(replica).Info(ctx, "replication").Result()
		if err != nil {
			return fmt.Errorf("%s: %w", replica.Addr, err)
		}
		if st := cluster.InfoField(info, "master_link_status"); st != "up" {
			return fmt.Errorf("%s: master_link_status:%s", replica.Addr, st)
		}
		for _, n := range s.Sentinels {
			flat, err := s.admin(n).Do(ctx, "SENTINEL", "MASTER", opt.MasterName).StringSlice()
			if err != nil {
				return fmt.Errorf("%s: %w", n.Addr, err)
			}
			m := map[string]string{}
			for i := 0; i+1 < len(flat); i += 2 {
				m[flat[i]] = flat[i+1]
			}
			if m["num-slaves"] != "1" || m["num-other-sentinels"] != strconv.Itoa(opt.Sentinels-1) {
				return fmt.Errorf("%s knows %s replicas and %s other sentinels", n.Addr, m["num-slaves"], m["num-other-sentinels"])
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("start sentinel: %w", err)
	}
	return s, nil
}

// StartSentinelForTest is StartSentinel for a test: it fails the test (it
// never skips) if the processes cannot be started, and stops them when the
// test ends.
func StartSentinelForTest(tb TB, opt SentinelOptions) *Sentinel {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	defer cancel()
	s, err := StartSentinel(ctx, opt)
	if err != nil {
		tb.Fatalf("redis sentinel: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stop redis sentinel: %v", err)
		}
	})
	return s
}

// startSentinelNode starts one sentinel on a free port.
func startSentinelNode(ctx context.Context, root, bin string, t *TLS, conf []string) (*Node, error) {
	return startOnFreePort(ctx, func(port int) (*Node, error) {
		dir := filepath.Join(root, "sentinel-"+strconv.Itoa(port))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		n := &Node{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, Dir: dir,
			Config: filepath.Join(dir, "sentinel.conf"), Log: filepath.Join(dir, "sentinel.log"), bin: bin}
		lines := append([]string{"port " + strconv.Itoa(port), "bind 127.0.0.1", "protected-mode no",
			"daemonize no", `logfile ""`, "dir " + dir}, conf...)
		if t != nil {
			// Sentinel reaches the servers over TLS too (tls-replication).
			lines = append(lines, t.serverConfig(port)...)
			n.tls = t.ClientConfig()
		}
		// Sentinel rewrites its config file as it learns: it must be its own.
		if err := os.WriteFile(n.Config, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return nil, err
		}
		return n, nil
	})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (s *Sentinel) admin(n *Node) *redis.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return n.rdb
}

// SentinelAddrs returns the addresses of the sentinels, for
// redis.FailoverOptions.SentinelAddrs.
func (s *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		addrs[i] = n.Addr
	}
	return addrs
}

// MasterAddr returns the master's address as the first sentinel that answers
// sees it.
func (s *Sentinel) MasterAddr(ctx context.Context) (string, error) {
	var errs []error
	for _, n := range s.Sentinels {
		if !s.running(n) {
			continue
		}
		v, err := s.admin(n).Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.MasterName).StringSlice()
		if err != nil || len(v) != 2 {
			errs = append(errs, fmt.Errorf("%s: %v %v", n.Addr, v, err))
			continue
		}
		return net.JoinHostPort(v[0], v[1]), nil
	}
	return "", fmt.Errorf("master of %s: %w", s.MasterName, errors.Join(errs...))
}

func (s *Sentinel) running(n *Node) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return n.proc.running()
}

// Kill kills the server or sentinel at addr with SIGKILL, like a crash, and
// waits for it to exit.
func (s *Sentinel) Kill(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("kill: sentinel stopped")
	}
	for _, n := range append(s.Servers[:len(s.Servers):len(s.Servers)], s.Sentinels...) {
		if n.Addr == addr {
			if !n.proc.running() {
				return fmt.Errorf("kill %s: not running", addr)
			}
			n.proc.kill()
			return nil
		}
	}
	return fmt.Errorf("kill %s: not started by the harness", addr)
}

// WaitFailover waits, after Kill of the master at killed, until every live
// sentinel names another server as the master and that server says it is
// one. It returns the new master's address.
func (s *Sentinel) WaitFailover(ctx context.Context, killed string) (newMaster string, err error) {
	err = poll(ctx, "wait for failover of "+killed, func(ctx context.Context) error {
		var addr string
		for _, n := range s.Sentinels {
			if !s.running(n) {
				continue
			}
			v, err := s.admin(n).Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.MasterName).StringSlice()
			if err != nil || len(v) != 2 {
				return fmt.Errorf("%s: %v %v", n.Addr, v, err)
			}
			a := net.JoinHostPort(v[0], v[1])
			if a == killed {
				return fmt.Errorf("%s still names %s", n.Addr, killed)
			}
			if addr != "" && a != addr {
				return fmt.Errorf("the sentinels name %s and %s", addr, a)
			}
			addr = a
		}
		for _, n := range s.Servers {
			if n.Addr != addr {
				continue
			}
			info, err := s.admin(n).Info(ctx, "replication").Result()
			if err != nil {
				return fmt.Errorf("%s: %w", n.Addr, err)
			}
			if r := cluster.InfoField(info, "role"); r != "master" {
				return fmt.Errorf("%s is still a %s", n.Addr, r)
			}
			newMaster = addr
			return nil
		}
		return fmt.Errorf("the sentinels name %s, which the harness did not start", addr)
	})
	return newMaster, err
}

// Stop stops every process (SIGTERM, then SIGKILL 5 s later), waits for them
// to exit and removes the directory. Calling it again does nothing and
// returns the first call's error.
func (s *Sentinel) Stop() error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.stopped = true
		var errs []error
		var wg sync.WaitGroup
		for _, n := range append(s.Servers[:len(s.Servers):len(s.Servers)], s.Sentinels...) {
			if n.proc != nil {
				wg.Go(func() { n.proc.stop(5 * time.Second) })
			}
			if n.rdb != nil {
				errs = append(errs, closeAdmin(n))
			}
		}
		s.mu.Unlock()
		wg.Wait()
		errs = append(errs, os.RemoveAll(s.dir))
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}
