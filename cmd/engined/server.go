package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/internal/bench"
)

// Timeouts of the HTTP server. A request's Redis work is bounded by
// requestTimeout; the others bound what a slow or idle client can hold.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 20 * time.Second                              // headers and body
	writeTimeout      = readTimeout + requestTimeout + 10*time.Second // from the end of the headers to the end of the answer
	idleTimeout       = 2 * time.Minute
	// shutdownTimeout bounds the wait for in-flight requests on SIGTERM: a
	// request's Redis work ends within requestTimeout.
	shutdownTimeout = requestTimeout + 5*time.Second
)

// server holds what the handlers share.
type server struct {
	eng     *engine.Engine
	auth    *authenticator
	log     *slog.Logger
	metrics *metrics
	ready   *readiness
	ledger  ledgerReader // statements and old instructions, given --pg
}

func newServer(eng *engine.Engine, rdb redis.UniversalClient, tokens []string, log *slog.Logger) *server {
	m := newMetrics(rdb)
	register(m.reg, "atomledger_replica_wait_answers", "Answers waiting now for replicas to acknowledge their writes (--min-replica-acks).", false,
		func() int64 { return eng.ReplicaStats().Waiting })
	register(m.reg, "atomledger_replica_unconfirmed_total", "Answers given 503 UNAVAILABLE because too few replicas acknowledged the write in time (--min-replica-acks): applied on the master, outcome unconfirmed.", true,
		func() int64 { return eng.ReplicaStats().Unconfirmed })
	auth := newAuthenticator(tokens)
	m.reg.MustRegister(limitedCollector{a: auth})
	return &server{
		eng:     eng,
		auth:    auth,
		log:     log,
		metrics: m,
		ready:   &readiness{eng: eng},
	}
}

// serveOptions are the settings of serve beyond the shared Config.
type serveOptions struct {
	tokens []token // empty: /v1/ is open (serve --dev only)
	// reloadTokens, if not nil, gives the tokens again at SIGHUP.
	reloadTokens func() ([]token, error)
	cert         *certHolder // nil: plain HTTP
	log          *slog.Logger
	// onServing, when not nil, is called once requests are being served.
	onServing func()
	// benchFloor serves the system bench's floor (withFloor).
	benchFloor bool
}

// serve runs the daemon on ln until ctx is done, then stops accepting
// connections, lets the requests in flight finish (for shutdownTimeout at
// most, then cuts off the connections left) and returns nil. It returns an
// error if serving fails.
func serve(ctx context.Context, ln net.Listener, cfg *Config, opt serveOptions) error {
	log := opt.log
	redis.SetLogger(redisLogger{log: log})
	rdb := cfg.RedisClient()
	defer rdb.Close()
	eo := cfg.EngineOptions()
	eo.Logger = log // a transfer step left for the recovery worker shows in the daemon's own log
	eng := engine.New(rdb, eo)
	defer eng.Flush() // before the client closes: the bookings of the last payments
	s := newServer(eng, rdb, nil, log)
	s.auth.set(opt.tokens)
	defer s.openLedgerReader(ctx, cfg)() // closed once the requests in flight are answered
	workersCtx, stopWorkers := context.WithCancel(context.Background())
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		runWorkers(workersCtx, cfg, rdb, eng, log, s.metrics.reg)
	}()
	// The workers stop after the requests in flight are answered.
	defer func() { stopWorkers(); <-workersDone }()

	log.Info("starting", "config", cfg, "tokens_accepted", len(opt.tokens))
	if s.auth.open() {
		log.Warn("no bearer tokens (--dev): /v1/ is open to anyone who can reach " + ln.Addr().String())
	}
	handler := s.handler()
	if opt.benchFloor {
		handler = s.withFloor(ctx, handler, rdb)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if opt.cert != nil {
		srv.TLSConfig = opt.cert.config()
	}
	defer onHangUp(func() { s.reload(opt) })()
	served := make(chan error, 1)
	go func() {
		if opt.cert != nil {
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()
	log.Info("listening", "addr", ln.Addr().String(), "tls", opt.cert != nil)
	// Not ready is no reason to stop: /readyz says so until Redis answers.
	go func() {
		ctx, cancel := context.WithTimeout(ctx, readyTimeout)
		defer cancel()
		if err := s.ready.check(ctx); err != nil {
			log.Warn("redis not ready", "code", "UNAVAILABLE", "error", withClusterHint(err.Error(), "; "))
		} else {
			log.Info("redis ready: scripts loaded")
		}
	}()
	if opt.onServing != nil {
		opt.onServing()
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing the requests in flight", "timeout", shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		// Every request's Redis work ends within requestTimeout, shorter
		// than the wait: what is left is a client too slow to send its
		// body or read its answer. Cutting it loses nothing applied (it
		// retries with its id, as after any broken connection), and is no
		// failure of the daemon, so SIGTERM still ends in exit 0.
		_ = srv.Close()
		log.Warn("shutdown: cut off the clients still sending or reading after the wait", "timeout", shutdownTimeout.String())
	} else if err != nil {
		_ = srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// onHangUp calls reload at each SIGHUP until the returned function is
// called.
func onHangUp(reload func()) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				reload()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// withFloor serves the system bench's floor (bench.Floor) beside h, behind
// the tokens of /v1/: serve --bench-floor, which only the bench gives.
func (s *server) withFloor(ctx context.Context, h http.Handler, rdb redis.UniversalClient) http.Handler {
	if err := bench.LoadFloor(ctx, rdb); err != nil {
		s.log.Warn("bench floor: load the deduct script", "error", err.Error()) // the handler loads it on first use
	}
	floor := bench.Floor{Redis: rdb, Timeout: requestTimeout, ReadBody: readBody,
		WriteError: func(w http.ResponseWriter, err error) { writeError(w, err, false) }}
	mux := http.NewServeMux()
	mux.Handle("POST "+bench.FloorPath+"{holder}", s.auth.require(scopeWrite, floor))
	mux.Handle("/", h)
	s.log.Warn("--bench-floor: serving " + bench.FloorPath + "{holder}, for benchmarks only")
	return mux
}

// reload reads again what SIGHUP renews: the HTTPS certificate and the
// tokens file. A file that cannot be read keeps what is in use, and says so
// in the log; so does a tokens file without a token, which would open /v1/
// to anyone.
func (s *server) reload(opt serveOptions) {
	if opt.cert != nil {
		if err := opt.cert.reload(); err != nil {
			s.log.Error("SIGHUP: the HTTPS certificate stays the one in use", "error", err.Error())
		} else {
			s.log.Info("SIGHUP: the HTTPS certificate was read again", "cert", opt.cert.certFile)
		}
	}
	if opt.reloadTokens != nil {
		tokens, err := opt.reloadTokens()
		switch {
		case err != nil:
			s.log.Error("SIGHUP: the tokens stay the ones in use", "error", err.Error())
		case len(tokens) == 0:
			s.log.Error("SIGHUP: the tokens stay the ones in use", "error", "no token left: /v1/ would be open to anyone")
		default:
			s.auth.set(tokens)
			s.log.Info("SIGHUP: the tokens were read again", "tokens_accepted", len(tokens))
		}
	}
}
