package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func serveUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined serve [flags]

Serve runs the HTTP daemon (the API is described in docs/openapi.yaml):

  POST /v1/instructions         apply one instruction
  POST /v1/instructions/batch   {"instructions": [...]} -> {"results": [...]}
  GET  /v1/holders/{holder}     a holder's whole state
  POST /v1/transfers            a transfer over several holders, all or none
  GET  /v1/transfers/{id}       a transfer's state
  GET  /healthz                 200 while the process runs
  GET  /readyz                  200 when Redis answers, the scripts are loaded and replicas confirm writes
  GET  /metrics                 Prometheus metrics

Every /v1/ request needs "Authorization: Bearer <token>" with one of the
configured tokens: serve refuses to start without tokens unless --dev is
given. A token of --tokens-file may be limited to scopes: read for the GETs
under /v1/, write for the POSTs; another route is 403 FORBIDDEN.
--rate-limit and --rejection-limit (or a line's rate-limit=N and
rejection-limit=N) limit each token's requests and remembered rejected
instructions a second: past them, 429 RATE_LIMITED with Retry-After. SIGHUP
reads the tokens file and the HTTPS certificate again (docs/security.md). Logs are JSON lines on stderr: one per request, at debug level for
a success, warn for a client error, error for a server error, with the
error code. Serve also runs the hold-expiry sweeper and the transfer
recovery worker (with --pg, the outbox relay too). SIGTERM or SIGINT stops
accepting connections, lets the requests in flight finish (waiting 15s at
most: a client still sending its body or reading its answer then is cut
off), and exits 0.
Exit status 1: the daemon could not listen or serve; 2: a bad flag or
environment value.

Flags:

  --dev
        allow serving /v1/ without tokens (never in production)
  --tls-cert FILE, --tls-key FILE
        serve HTTPS (TLS 1.2 or newer) with this certificate chain and key
        (PEM); SIGHUP reads them again, so a renewed certificate needs no
        restart
  --log-level LEVEL
        debug, info, warn or error (default info)
  --bench-floor
        for benchmarks only (engined bench --parts system): also serve
        POST /bench/floor/{holder}, the seed's deduct script behind the least
        HTTP can do, as the bench's baseline; it changes a key of its own per
        holder, never a holder's state. Off by default
`)
	printConfigUsage(w)
}

// runServe is "engined serve".
func runServe(args []string, c cli) int {
	f := newCommandFlags("serve", c, serveUsage)
	fs := f.fs
	dev := fs.Bool("dev", false, "allow serving /v1/ without tokens")
	tlsCert := fs.String("tls-cert", "", "certificate chain (PEM) for HTTPS")
	tlsKey := fs.String("tls-key", "", "private key (PEM) for HTTPS")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	benchFloor := fs.Bool("bench-floor", false, "for benchmarks only: serve the bench's floor handler")
	if status, ok := f.parse(args); !ok {
		return status
	}
	cfg, level, tokens, err := daemonConfig(f, *logLevel)
	if err != nil {
		return f.fail("%v", err)
	}
	if len(tokens) == 0 && !*dev {
		return f.fail("no bearer tokens: give --tokens or --tokens-file (or ENGINED_TOKENS, ENGINED_TOKENS_FILE), or --dev to serve /v1/ without authentication")
	}
	cert, err := loadCert(*tlsCert, *tlsKey)
	if err != nil {
		return f.fail("%v", err)
	}

	ctx, stop := notifyContext()
	defer stop()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", f.name, err)
		return exitFailed
	}
	log := newLogger(c.stderr, level)
	if err := serve(ctx, ln, cfg, serveOptions{tokens: tokens, reloadTokens: reloadTokens(cfg, nil), cert: cert, log: log, benchFloor: *benchFloor}); err != nil {
		log.Error("engined serve stopped", "error", err.Error())
		return exitFailed
	}
	return exitOK
}

// daemonConfig resolves what serve and dev share: the configuration, the
// log level and the bearer tokens.
func daemonConfig(f *commandFlags, logLevel string) (*Config, slog.Level, []token, error) {
	cfg, err := f.config()
	if err != nil {
		return nil, 0, nil, err
	}
	level, err := parseLevel(logLevel)
	if err != nil {
		return nil, 0, nil, err
	}
	tokens, err := loadTokens(cfg)
	if err != nil {
		return nil, 0, nil, err
	}
	return cfg, level, tokens, nil
}

// reloadTokens reads the tokens again on SIGHUP, with fixed ones first; nil
// without a tokens file, which is all that can change.
func reloadTokens(cfg *Config, fixed []token) func() ([]token, error) {
	if cfg.TokensFile == "" {
		return nil
	}
	return func() ([]token, error) {
		tokens, err := loadTokens(cfg)
		return append(fixed[:len(fixed):len(fixed)], tokens...), err
	}
}

// notifyContext is done at the first SIGINT or SIGTERM; a second one then
// ends the process at once, as if nothing caught it.
func notifyContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
