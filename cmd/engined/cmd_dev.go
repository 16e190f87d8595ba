package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger/pgtest"
)

// devDir is where engined dev keeps its cluster, under the working directory.
var devDir = filepath.Join(".run", "redis")

// devTLSDir is where engined dev --tls keeps the certificates it makes.
var devTLSDir = filepath.Join(".run", "tls")

// devStartTimeout bounds the start of the dev cluster.
const devStartTimeout = 60 * time.Second

func devUsage(w io.Writer) {
	fmt.Fprintf(w, `Usage: engined dev [flags]

Dev starts a local Redis Cluster of 3 masters and 3 replicas (redis-server
processes under %s in the working directory) and, unless --pg names one, a
temporary PostgreSQL for the ledger, opens the example holders alice and
bob, and serves the API as engined serve does (with the outbox relay into
the ledger, the hold-expiry sweeper and the transfer recovery worker), on
--listen (default 127.0.0.1:8080), with a bearer token generated for this
run. It prints curl commands to paste, in order, that exercise the API.

Each run starts an empty cluster: nothing is kept from one run to the next.
SIGINT (Ctrl-C) or SIGTERM stops the daemon and every server it started. The --redis flags do not apply (the ENGINED_REDIS_* variables are
ignored); tokens given with --tokens or --tokens-file are accepted too.

Flags:

  --log-level LEVEL
        debug, info, warn or error (default info)
  --tls
        serve HTTPS with a certificate made for this run, signed by an
        authority made for it too (its certificate is written to
        %s/ca.pem, which the printed commands trust)
`, devDir, devTLSDir)
	printConfigUsage(w)
}

// runDev is "engined dev".
func runDev(args []string, c cli) int {
	f := newCommandFlags("dev", c, devUsage)
	fs := f.fs
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	withTLS := fs.Bool("tls", false, "serve HTTPS with a certificate made for this run")
	if status, ok := f.parse(args); !ok {
		return status
	}
	var redisFlags []string
	fs.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "redis") {
			redisFlags = append(redisFlags, "--"+f.Name)
		}
	})
	if len(redisFlags) > 0 {
		return f.fail("%s: dev starts its own Redis Cluster (use engined serve for another Redis)", strings.Join(redisFlags, ", "))
	}
	cfg, level, tokens, err := daemonConfig(f, *logLevel)
	if err != nil {
		return f.fail("%v", err)
	}
	devToken := newDevToken()
	fixed := []token{newToken("dev", devToken, allScopes)}
	tokens = append(fixed, tokens...)

	// The address is taken before anything starts: a second engined dev
	// fails here, without touching the cluster of the first.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v (is another engined dev running? choose another address with --listen)\n", f.name, err)
		return exitFailed
	}
	defer ln.Close()
	log := newLogger(c.stderr, level)
	for _, o := range options {
		if strings.HasPrefix(o.flag, "redis") && c.getenv(o.env) != "" {
			log.Info("ignored: dev starts its own Redis Cluster", "variable", o.env)
		}
	}

	ctx, stop := notifyContext()
	defer stop()
	cl, err := startDevCluster(ctx, log)
	switch {
	case err != nil && ctx.Err() != nil:
		log.Info("interrupted while starting the Redis Cluster: stopped")
		return exitOK
	case err != nil:
		log.Error("start the Redis Cluster", "error", err.Error())
		return exitFailed
	}
	defer stopDevCluster(cl, log)

	if cfg.PGDSN == "" {
		pg, err := startDevLedger(ctx, log)
		if err != nil {
			log.Error("start PostgreSQL for the ledger", "error", err.Error())
			return exitFailed
		}
		defer pg.Close()
		cfg.PGDSN = pg.DSN
	}

	cfg.RedisAddrs, cfg.RedisCluster = cl.Addrs(), true
	cfg.RedisMaster, cfg.RedisUsername, cfg.RedisPassword, cfg.RedisTLS = "", "", "", false
	if err := openExampleHolders(ctx, cfg); err != nil {
		log.Error("open the example holders", "code", string(asError(err).Code), "error", err.Error())
		return exitFailed
	}
	// The commands the banner prints run this same binary, by its absolute
	// path, so that they paste from any directory.
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	var cert *certHolder
	curl := []string{"curl", "-sS"}
	if *withTLS {
		caFile, h, err := devCert()
		if err != nil {
			log.Error("make the HTTPS certificate", "error", err.Error())
			return exitFailed
		}
		defer os.RemoveAll(devTLSDir)
		cert = h
		curl = append(curl, "--cacert", shellQuote(caFile))
	}
	banner := func() {
		printDevBanner(c.stdout, self, curl, baseURL(ln.Addr(), cert != nil), devToken, cl, cfg.PGDSN)
	}
	if err := serve(ctx, ln, cfg, serveOptions{tokens: tokens, reloadTokens: reloadTokens(cfg, fixed), cert: cert, log: log, onServing: banner}); err != nil {
		log.Error("engined dev stopped", "error", err.Error())
		return exitFailed
	}
	return exitOK
}

// devCert makes an authority and a certificate for 127.0.0.1, ::1 and
// localhost under devTLSDir, and gives the absolute path of the authority's
// certificate, which clients trust.
func devCert() (caFile string, cert *certHolder, err error) {
	dir, err := filepath.Abs(devTLSDir)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	tc, err := clustertest.NewTLS(dir)
	if err != nil {
		return "", nil, err
	}
	cert, err = loadCert(tc.ServerCert, tc.ServerKey)
	return tc.CAFile, cert, err
}

func startDevCluster(ctx context.Context, log *slog.Logger) (*clustertest.Cluster, error) {
	// The harness starts each server in its node's directory and hands it
	// the config's path: a relative path would be resolved twice.
	dir, err := filepath.Abs(devDir)
	if err != nil {
		return nil, err
	}
	log.Info("starting a Redis Cluster: 3 masters, 3 replicas", "dir", dir)
	ctx, cancel := context.WithTimeout(ctx, devStartTimeout)
	defer cancel()
	// Keyspace events for the workers' change notices (docs/events.md, Delivery).
	return clustertest.Start(ctx, clustertest.Options{Masters: 3, Replicas: 1, Dir: dir,
		ExtraConfig: []string{"notify-keyspace-events Etz"}})
}

// stopDevCluster stops the servers and removes their directories: their
// data lived in memory only, and a later run uses other ports.
func stopDevCluster(cl *clustertest.Cluster, log *slog.Logger) {
	err := cl.Stop()
	for _, n := range cl.Nodes {
		err = errors.Join(err, os.RemoveAll(n.Dir))
	}
	_ = os.Remove(devDir) // only if no other run left anything there
	if err != nil {
		log.Error("stop the Redis Cluster", "error", err.Error())
		return
	}
	log.Info("Redis Cluster stopped")
}

func newDevToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return "dev-" + hex.EncodeToString(b[:])
}

// exampleHolders are opened by engined dev before it serves. Their ids are
// fixed: on a cluster that has them already, the same ids replay.
var exampleHolders = []instructions.Instruction{
	instructions.New("dev-open-alice", "alice").Open().Credit("CNY", "1000.00").EarnPoints("5000").
		GrantCoupon("c-welcome", time.Time{}),
	instructions.New("dev-open-bob", "bob").Open().Credit("USD", "250.00"),
}

// openExampleHolders applies exampleHolders. A holder that exists already
// (HOLDER_EXISTS) is left as it is.
func openExampleHolders(ctx context.Context, cfg *Config) error {
	rdb := cfg.RedisClient()
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	for _, o := range engine.New(rdb, cfg.EngineOptions()).ApplyBatch(ctx, exampleHolders) {
		if o.Err != nil && !errors.Is(o.Err, instructions.ErrHolderExists) {
			return o.Err
		}
	}
	return nil
}

// devStep is one of the commands printed by engined dev.
type devStep struct {
	title string
	path  string
	body  any // nil: a GET
}

// devSteps go in order: each relies on the ones before. Their instruction
// ids are fixed because every run starts an empty cluster; a command pasted
// twice answers the same, marked "replayed": true.
var devSteps = []devStep{
	{title: "Open a holder, carol",
		path: "/v1/instructions", body: instructions.New("carol-open", "carol").Open()},
	{title: "Credit carol 500.00 CNY",
		path: "/v1/instructions", body: instructions.New("carol-credit-1", "carol").Credit("CNY", "500.00")},
	{title: "Freeze 120.00 CNY for an order: hold order-1, which expires in 24 h",
		path: "/v1/instructions", body: instructions.New("carol-order-1-freeze", "carol").Freeze("CNY", "120.00", "order-1", 24*time.Hour)},
	{title: "Settle 50.00 CNY of the hold, a partial fill: 70.00 stay frozen",
		path: "/v1/instructions", body: instructions.New("carol-order-1-fill-1", "carol").SettleLeg("order-1", "CNY", "50.00")},
	{title: "Checkout for alice: 80.00 CNY, 2000 points and the coupon c-welcome, all or nothing",
		path: "/v1/instructions", body: instructions.New("alice-order-55-pay", "alice").WithCounterparty("merchant:88").
			WithMemo("checkout order 55").Debit("CNY", "80.00").SpendPoints("2000").RedeemCoupon("c-welcome")},
	{title: "A batch: each instruction is atomic on its own, the batch is not",
		path: "/v1/instructions/batch", body: batchOf(
			instructions.New("bob-credit-1", "bob").Credit("USD", "10.00"),
			instructions.New("carol-credit-2", "carol").Credit("CNY", "1.00"))},
	{title: "A transfer: alice pays bob 25.00 CNY, both parts or neither (the holders live in different slots)",
		path: "/v1/transfers", body: instructions.Transfer{ID: "alice-pays-bob-1", Parts: []instructions.Part{
			{Holder: "alice", Ops: partOps().Debit("CNY", "25.00").Ops},
			{Holder: "bob", Ops: partOps().Credit("CNY", "25.00").Ops}}}},
	{title: "Read the transfer", path: "/v1/transfers/alice-pays-bob-1"},
	{title: "Read everything carol has", path: "/v1/holders/carol"},
}

// partOps starts the ops of a transfer's part with the instruction builder.
func partOps() instructions.Instruction { return instructions.Instruction{} }

func batchOf(ins ...instructions.Instruction) any {
	return struct {
		Instructions []instructions.Instruction `json:"instructions"`
	}{ins}
}

// printDevBanner tells how to reach the daemon and what to paste.
// startDevLedger starts a temporary PostgreSQL for the ledger; serve runs the
// relay into it. Its data goes when dev stops.
func startDevLedger(ctx context.Context, log *slog.Logger) (*pgtest.Server, error) {
	log.Info("starting PostgreSQL for the ledger")
	ctx, cancel := context.WithTimeout(ctx, devStartTimeout)
	defer cancel()
	return pgtest.Start(ctx)
}

func printDevBanner(w io.Writer, self string, curl []string, base, token string, cl *clustertest.Cluster, pgDSN string) {
	fmt.Fprintf(w, `
engined dev is ready.

  API         %s   (described in docs/openapi.yaml)
  token       %s   (this run only)
  Redis       3 masters, 3 replicas: %s (--redis %s --redis-cluster)
              logs: %s/<port>/redis.log (removed when dev stops)
  holders     alice (1000.00 CNY, 5000 points, coupon c-welcome), bob (250.00 USD)

Paste these commands in order:

`, base, token, strings.Join(cl.Addrs(), " "), strings.Join(cl.Addrs(), ","), devDir)
	for i, s := range devSteps {
		fmt.Fprintf(w, "%d. %s:\n   %s\n\n", i+1, s.title, curlCommand(curl, base, token, s))
	}
	fmt.Fprintf(w, "The ledger in PostgreSQL (the relay brings each instruction there within a second):\n   psql %s -c %s\n\n",
		shellQuote(pgDSN), shellQuote("select holder, seq, id, counterparty from ledger.events order by ts_ms desc limit 5"))
	redis := strings.Join(cl.Addrs(), ",")
	fmt.Fprintf(w, "Compare every holder in Redis with the ledger (exit 0: no drift):\n   %s reconcile --redis %s --redis-cluster --pg %s\n\n",
		shellQuote(self), redis, shellQuote(pgDSN))
	fmt.Fprintf(w, "Carol's statement from the ledger:\n   %s events --holder carol --pg %s\n\n", shellQuote(self), shellQuote(pgDSN))
	fmt.Fprint(w, "Metrics: "+strings.Join(curl, " ")+" "+base+"/metrics   Stop: Ctrl-C\n\n")
}

// curlCommand spells a step as a curl command line for a POSIX shell,
// starting with curl (the command and its options, quoted).
func curlCommand(curl []string, base, token string, s devStep) string {
	args := append(curl[:len(curl):len(curl)], "-H", shellQuote("Authorization: Bearer "+token))
	if s.body != nil {
		body, _ := json.Marshal(s.body) // fixed values of plain types: it cannot fail
		args = append(args, "-H", shellQuote("Content-Type: application/json"), "-d", shellQuote(string(body)))
	}
	return strings.Join(append(args, shellQuote(base+s.path)), " ")
}

// shellQuote quotes s for a POSIX shell: inside single quotes nothing is
// special but the single quote itself.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// baseURL is the URL of the daemon listening at addr, with a loopback host
// where it listens on every address.
func baseURL(addr net.Addr, https bool) string {
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + net.JoinHostPort(host, port)
}
