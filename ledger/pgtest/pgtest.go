// Package pgtest starts a real, temporary PostgreSQL server for tests: initdb
// into a temporary directory, then the postgres binary on a free port of
// 127.0.0.1, stopped and removed on cleanup. When the environment variable
// ATOMLEDGER_TEST_PG holds a connection string, tests use that server
// instead.
//
// PostgreSQL refuses to run as root: when the tests run as root (CI does),
// the server runs as the "postgres" system user, which the Debian package
// creates.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvTestPG names the environment variable holding the DSN of a running
// server to use instead of starting one.
const EnvTestPG = "ATOMLEDGER_TEST_PG"

// Server is a PostgreSQL server started by Start, or the one named by
// ATOMLEDGER_TEST_PG (which Stop and Restart leave alone).
type Server struct {
	// DSN connects to the server's "postgres" database.
	DSN string

	dir, bin, port string
	cred           *syscall.Credential
	durable        bool // PostgreSQL's own fsync, synchronous_commit and full_page_writes

	mu   sync.Mutex
	proc *exec.Cmd
	done chan struct{}
	hold int // holdPort's socket while the server is not running; -1: none
}

// Started reports whether this package started the server (and so can stop
// and restart it).
func (s *Server) Started() bool { return s.dir != "" }

// StartForMain returns the server named by ATOMLEDGER_TEST_PG, or starts one.
// The caller calls Close after m.Run.
func StartForMain(ctx context.Context) (*Server, error) {
	if dsn := os.Getenv(EnvTestPG); dsn != "" {
		s := &Server{DSN: dsn}
		return s, s.waitReady(ctx)
	}
	return Start(ctx)
}

// StartForTest is StartForMain for one test: it fails the test (it never
// skips) when no server can be started, and closes it when the test ends.
func StartForTest(tb TB) *Server {
	tb.Helper()
	// Generous: initdb and the server start slowly while go test runs every
	// package's tests and servers at once.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := StartForMain(ctx)
	if err != nil {
		tb.Fatalf("postgresql: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("stop postgresql: %v", err)
		}
	})
	return s
}

// Start runs initdb in a new temporary directory and starts the server on a
// free port, returning once it accepts connections. It trades durability
// for speed (no fsync, no full-page images): a test server holds nothing
// worth an fsync.
func Start(ctx context.Context) (*Server, error) { return startServer(ctx, false) }

// StartDurable is Start with PostgreSQL's own durability settings, as a
// deployment runs it: a benchmark that counts the server's CPU and WAL
// measures what production would write.
func StartDurable(ctx context.Context) (*Server, error) { return startServer(ctx, true) }

func startServer(ctx context.Context, durable bool) (_ *Server, err error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, hold: -1, durable: durable}
	if s.dir, err = os.MkdirTemp("", "atomledger-pg-"); err != nil {
		return nil, fmt.Errorf("start postgresql: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("start postgresql as root: %w (the server refuses to run as root; install the postgresql package, which creates the user)", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return nil, fmt.Errorf("start postgresql: %w", err)
		}
	}
	data := filepath.Join(s.dir, "data")
	initdb := s.command(ctx, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	// The port is held from the moment it is chosen; in the instant between
	// its release and the server's bind another process may still take it,
	// and then the server starts again on another.
	for attempt := 1; ; attempt++ {
		fd, port, err := holdPort(0)
		if err != nil {
			return nil, fmt.Errorf("start postgresql: %w", err)
		}
		s.mu.Lock()
		release(s.hold)
		s.hold = fd
		s.mu.Unlock()
		s.port = strconv.Itoa(port)
		s.DSN = "postgres://postgres@127.0.0.1:" + s.port + "/postgres?sslmode=disable"
		err = s.start(ctx)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortTaken) || attempt == 5 {
			return nil, err
		}
	}
}

// errPortTaken: the server exited because another process had its port.
var errPortTaken = errors.New("port taken by another process")

// binDir finds the server binaries: initdb on PATH, or else the newest
// /usr/lib/postgresql/<version>/bin (Debian keeps them off PATH).
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[j]))))
		return vi > vj
	})
	if len(dirs) == 0 {
		return "", errors.New("start postgresql: initdb not found on PATH nor in /usr/lib/postgresql/*/bin: install the postgresql package, or set " + EnvTestPG)
	}
	return filepath.Dir(dirs[0]), nil
}

func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = sysProcAttr()
	cmd.SysProcAttr.Credential = s.cred
	return cmd
}

// Restart starts the server again after Stop, on the same port and data,
// and waits until it accepts connections. Stop held the port meanwhile;
// should another process take it in the instant between its release and
// the server's bind, Restart tries again until ctx is done.
func (s *Server) Restart(ctx context.Context) error {
	if !s.Started() {
		return errors.New("restart postgresql: not started by pgtest")
	}
	for {
		err := s.start(ctx)
		if !errors.Is(err, errPortTaken) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// start starts the server on s.port, releasing the port's hold first, and
// waits until it accepts connections.
func (s *Server) start(ctx context.Context) error {
	s.mu.Lock()
	if s.proc != nil {
		s.mu.Unlock()
		return errors.New("restart postgresql: still running")
	}
	args := []string{"-D", filepath.Join(s.dir, "data"), "-p", s.port, "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", "-c", "shared_buffers=128MB"}
	if !s.durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := s.command(context.Background(), "postgres", args...)
	logf, err := os.OpenFile(filepath.Join(s.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("start postgresql: %w", err)
	}
	var logFrom int64 // this run's part of the log
	if fi, err := logf.Stat(); err == nil {
		logFrom = fi.Size()
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	release(s.hold)
	s.hold = -1
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		logf.Close()
		return fmt.Errorf("start postgresql: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	s.proc, s.done = cmd, done
	s.mu.Unlock()

	if err := s.waitReady(ctx); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
		select {
		case <-done: // it exited: Restart may start it again
			s.mu.Lock()
			if s.proc == cmd {
				s.proc = nil
			}
			s.mu.Unlock()
			if int64(len(log)) >= logFrom && bytes.Contains(log[logFrom:], []byte("Address already in use")) {
				err = fmt.Errorf("%w: %w", errPortTaken, err)
			}
		default:
		}
		return fmt.Errorf("%w\npostgres.log:\n%s", err, log)
	}
	return nil
}

// waitReady polls until the server accepts a connection.
func (s *Server) waitReady(ctx context.Context) error {
	for {
		c, err := pgx.Connect(ctx, s.DSN)
		if err == nil {
			return c.Close(ctx)
		}
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgresql not ready: %w", err)
		case <-done:
			return fmt.Errorf("postgresql exited: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop shuts the server down (fast shutdown: open sessions are cut) and
// waits for it to exit; Restart starts it again with its data.
func (s *Server) Stop() error {
	s.mu.Lock()
	p, done := s.proc, s.done
	s.proc = nil
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	_ = p.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.Process.Kill()
		<-done
	}
	// Keep the port until Restart: clients meanwhile are refused, as by a
	// stopped server, and no other process takes it. Best effort: without
	// the hold, Restart still retries.
	if fd, _, err := holdPort(s.portNumber()); err == nil {
		s.mu.Lock()
		s.hold = fd
		s.mu.Unlock()
	}
	return nil
}

func (s *Server) portNumber() int {
	n, _ := strconv.Atoi(s.port)
	return n
}

// Close stops a started server and removes its directory; for a server named
// by ATOMLEDGER_TEST_PG it does nothing.
func (s *Server) Close() error {
	if !s.Started() {
		return nil
	}
	err := s.Stop()
	s.mu.Lock()
	release(s.hold)
	s.hold = -1
	s.mu.Unlock()
	return errors.Join(err, os.RemoveAll(s.dir))
}

// NewDatabase creates a fresh database for one test and returns its DSN; the
// database is dropped when the test ends.
func (s *Server) NewDatabase(tb TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	c, err := pgx.Connect(ctx, s.DSN)
	if err != nil {
		tb.Fatalf("postgresql: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, s.DSN)
		if err != nil {
			return // the server is gone: nothing to drop
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return withDatabase(s.DSN, name)
}

// withDatabase swaps the database name of a URL or keyword/value DSN.
func withDatabase(dsn, name string) string {
	if u, err := parseURL(dsn); err == nil && u != nil {
		u.Path = "/" + name
		return u.String()
	}
	return dsn + " dbname=" + name
}

// TB is the part of testing.TB the harness uses. It is declared here so that
// a program that starts a server (engined dev, the bench) links no testing.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
}
