package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/atomledger/atomledger/cluster"
)

// Node is one server of a Cluster.
type Node struct {
	Addr   string // host:port clients connect to
	Port   int    // client port; the cluster bus listens on Port+10000
	ID     string // cluster node id; kept across Restart (it lives in nodes.conf)
	Dir    string // working directory holding redis.conf, nodes.conf and redis.log; "" if the harness did not start the node
	Config string // path of redis.conf
	Log    string // path of the log: the server's stdout and stderr, appended to on Restart

	bin string
	tls *tls.Config // the harness's client configuration; nil for plain TCP

	// Guarded by Cluster.mu.
	rdb      *redis.Client // administrative connection, no retries
	proc     *process      // nil for a node not started by the harness
	master   bool          // role in the last slot map the harness saw
	lastSeen *shard        // the node's shard when it was last killed as a master
}

// process is one run of a server.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // how it exited; set before done is closed
}

func (p *process) running() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, then SIGKILL once grace has passed, and waits for the
// process to exit.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill sends SIGKILL and waits for the process to exit.
func (p *process) kill() {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// baseConfig is the part of every node's redis.conf the harness relies on.
// The short node timeout and a validity factor of 0 (any replica may be
// promoted, however long its link was down) make a failover take about two
// seconds. Persistence is off: a restarted node rejoins empty and resyncs.
// The diskless sync delay is 0 so that a replica syncs at once instead of
// after the default 5 s.
var baseConfig = []string{
	"bind 127.0.0.1",
	"protected-mode no",
	"daemonize no",
	`logfile ""`,
	"cluster-enabled yes",
	"cluster-config-file nodes.conf",
	"cluster-node-timeout 1000",
	"cluster-replica-validity-factor 0",
	"appendonly no",
	`save ""`,
	"repl-diskless-sync-delay 0",
}

// newNode prepares the directory and config of a node on port under root,
// replacing whatever a former run left there.
func newNode(root, bin string, port int, extra []string) (*Node, error) {
	dir := filepath.Join(root, strconv.Itoa(port))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	n := &Node{
		Addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Port:   port,
		Dir:    dir,
		Config: filepath.Join(dir, "redis.conf"),
		Log:    filepath.Join(dir, "redis.log"),
		bin:    bin,
	}
	var conf bytes.Buffer
	fmt.Fprintf(&conf, "port %d\n", port)
	for _, line := range baseConfig {
		conf.WriteString(line + "\n")
	}
	for _, line := range extra {
		conf.WriteString(line + "\n")
	}
	if err := os.WriteFile(n.Config, conf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return n, nil
}

// launch starts the server. The server's working directory is the node's
// directory, so nodes.conf lands there.
func (n *Node) launch() (*process, error) {
	logf, err := os.OpenFile(n.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own copy
	cmd := exec.Command(n.bin, n.Config)
	cmd.Dir = n.Dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", n.bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// errExited reports a server that exited while the harness waited for it.
var errExited = errors.New("redis-server exited")

// waitUp waits until the server of p answers on n's port. If the process
// exits first, the error wraps errExited and quotes the end of the log. It
// speaks RESP by hand rather than through go-redis, whose pool logs and
// backs off after refused dials, which are expected while a server boots.
//
// The answer must come from p itself (INFO's process_id): the port was free
// when chosen, but a server another package's tests started meanwhile may
// have taken it, and would answer while p exits for want of it.
func (n *Node) waitUp(ctx context.Context, p *process) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if pid, err := serverPID(ctx, n.Addr, n.tls); err == nil && pid == p.cmd.Process.Pid {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s: %w (%v); log:\n%s", n.Addr, errExited, p.err, tail(n.Log, 10))
		case <-ctx.Done():
			return fmt.Errorf("%s: wait for PING: %w", n.Addr, ctx.Err())
		case <-t.C:
		}
	}
}

// serverPID asks the server at addr for its process id (INFO server).
func serverPID(ctx context.Context, addr string, tlsConfig *tls.Config) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := dial(ctx, addr, tlsConfig)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"); err != nil {
		return 0, err
	}
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if !strings.HasPrefix(head, "$") || err != nil {
		return 0, fmt.Errorf("INFO answered %q", strings.TrimSpace(head))
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	if v := cluster.InfoField(string(body), "process_id"); v != "" {
		return strconv.Atoi(v)
	}
	return 0, errors.New("INFO has no process_id")
}

// dial connects to addr, over TLS if tlsConfig is set, with the deadline of
// ctx on the connection.
func dial(ctx context.Context, addr string, tlsConfig *tls.Config) (net.Conn, error) {
	var conn net.Conn
	var err error
	if tlsConfig == nil {
		conn, err = new(net.Dialer).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = (&tls.Dialer{Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	return conn, nil
}

func ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := dial(ctx, addr, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "*1\r\n$4\r\nPING\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// addrInUse reports whether err is a server exit caused by a port taken
// between the harness choosing it and the server binding it.
func addrInUse(err error) bool {
	return errors.Is(err, errExited) && strings.Contains(err.Error(), "Address already in use")
}

// tail returns the last lines of the file at path, for error messages.
func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// adminClient returns a connection to addr for the harness's own polling:
// one dial attempt and no retries, since every caller polls anyway, and
// RESP2 without client-side extras, which an old server would refuse.
func adminClient(addr string, tlsConfig *tls.Config) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                  addr,
		TLSConfig:             tlsConfig,
		Protocol:              2,
		DialTimeout:           time.Second,
		DialerRetries:         1,
		ReadTimeout:           2 * time.Second,
		WriteTimeout:          2 * time.Second,
		MaxRetries:            -1,
		PoolSize:              2,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	})
}

// closeAdmin closes the administrative connection of n. Over TLS, closing
// says goodbye to the server, which fails once the server is gone (killed,
// or stopping meanwhile): that is no error of the harness's.
func closeAdmin(n *Node) error {
	err := n.rdb.Close()
	if n.tls != nil {
		return nil
	}
	return err
}

var (
	portsMu    sync.Mutex
	portsTaken = map[int]bool{} // ports this process already handed to a server
)

// freePort returns a port p on 127.0.0.1 such that p and its cluster bus
// port p+10000 were both free a moment ago and were not handed out before by
// this process. Another process may still take them before the server binds
// them: callers retry with a new port when the server reports the address in
// use.
func freePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	var lastErr error
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		bus := port + 10000
		if bus > 65535 || portsTaken[port] || portsTaken[bus] {
			l.Close()
			continue
		}
		bl, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(bus)))
		l.Close()
		if err != nil {
			lastErr = err
			continue
		}
		bl.Close()
		portsTaken[port] = true
		portsTaken[bus] = true
		return port, nil
	}
	return 0, fmt.Errorf("no free port pair: %v", lastErr)
}

// startOnFreePort prepares a node on a free port and starts it, trying other
// ports while the chosen one turns out to be taken (another process may take
// a port between the check and the server's bind).
func startOnFreePort(ctx context.Context, prepare func(port int) (*Node, error)) (*Node, error) {
	var err error
	for range 5 {
		var port int
		if port, err = freePort(); err != nil {
			return nil, err
		}
		var n *Node
		if n, err = prepare(port); err != nil {
			return nil, err
		}
		var p *process
		if p, err = n.launch(); err != nil {
			return nil, err
		}
		if err = n.waitUp(ctx, p); err == nil {
			n.proc = p
			n.rdb = adminClient(n.Addr, n.tls)
			return n, nil
		}
		p.kill()
		_ = os.RemoveAll(n.Dir)
		if !addrInUse(err) {
			return nil, err
		}
	}
	return nil, err
}
