package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
)

// Config is the configuration every command shares: the contract's table of
// flags and environment variables, parsed and checked. Commands build it with
// addConfigFlags and configFlags.config.
type Config struct {
	RedisAddrs      []string               // --redis, ENGINED_REDIS_ADDRS; default [127.0.0.1:6379]
	RedisCluster    bool                   // --redis-cluster, ENGINED_REDIS_CLUSTER; default false
	RedisMaster     string                 // --redis-master, ENGINED_REDIS_MASTER; default "" (no Sentinel)
	RedisUsername   string                 // --redis-username, ENGINED_REDIS_USERNAME; default ""
	RedisPassword   string                 // --redis-password, ENGINED_REDIS_PASSWORD; default ""
	RedisTLS        bool                   // --redis-tls, ENGINED_REDIS_TLS; default false
	Listen          string                 // --listen, ENGINED_LISTEN; default 127.0.0.1:8080
	Assets          *instructions.Registry // --assets, ENGINED_ASSETS; default instructions.DefaultAssets
	IdempotencyTTL  time.Duration          // --idempotency-ttl, ENGINED_IDEMPOTENCY_TTL; default 24h
	Tokens          []string               // --tokens, ENGINED_TOKENS; default none
	TokensFile      string                 // --tokens-file, ENGINED_TOKENS_FILE; default ""
	PGDSN           string                 // --pg, ENGINED_PG_DSN; default ""
	TransferTimeout time.Duration          // --transfer-timeout, ENGINED_TRANSFER_TIMEOUT; default 30s
	HotSweep        time.Duration          // --hot-sweep, ENGINED_HOT_SWEEP; default 1s, 0 off
	MinReplicaAcks  int                    // --min-replica-acks, ENGINED_MIN_REPLICA_ACKS; default 0
	Webhooks        []string               // --webhook (several times), ENGINED_WEBHOOKS; default none
	WebhookSecret   string                 // --webhook-secret, ENGINED_WEBHOOK_SECRET; default ""
	RedisTLSCA      string                 // --redis-tls-ca, ENGINED_REDIS_TLS_CA; default "" (the system's roots)
	RedisTLSCert    string                 // --redis-tls-cert, ENGINED_REDIS_TLS_CERT; default "" (no client certificate)
	RedisTLSKey     string                 // --redis-tls-key, ENGINED_REDIS_TLS_KEY; default ""
	RedisTLSName    string                 // --redis-tls-server-name, ENGINED_REDIS_TLS_SERVER_NAME; default "" (the address's host)
	RateLimit       int                    // --rate-limit, ENGINED_RATE_LIMIT; default 0 (none)
	RejectionLimit  int                    // --rejection-limit, ENGINED_REJECTION_LIMIT; default 0 (none)

	redisTLS *tls.Config // built from the four above by config; nil for Go's defaults
}

// option is one row of the contract's configuration table.
type option struct {
	flag   string // without dashes
	env    string
	def    string // in the syntax of the flag
	arg    string // placeholder of the value in the usage; "" for a switch
	secret bool   // never echo the value, not even in an error message
	multi  bool   // may be given several times: the values join as a comma-separated list
	usage  string
	set    func(c *Config, v string) error
}

// options is the configuration table, in the contract's order, then the
// rows the project added to it. Every command registers all of it, so that
// one environment serves them all.
var options = []option{
	{flag: "redis", env: "ENGINED_REDIS_ADDRS", def: "127.0.0.1:6379", arg: "ADDR[,ADDR...]",
		usage: "Redis addresses: one is a single server, several a cluster",
		set: func(c *Config, v string) (err error) {
			if strings.Contains(v, "@") {
				return errors.New("an address is HOST:PORT, not a URL with credentials: give the password by ENGINED_REDIS_PASSWORD")
			}
			if c.RedisAddrs, err = splitList(v, checkHostPort); err == nil && len(c.RedisAddrs) == 0 {
				err = errors.New("want at least one address")
			}
			return err
		}},
	{flag: "redis-cluster", env: "ENGINED_REDIS_CLUSTER", def: "false",
		usage: "cluster mode even with a single seed address",
		set:   func(c *Config, v string) (err error) { c.RedisCluster, err = parseBool(v); return err }},
	{flag: "redis-master", env: "ENGINED_REDIS_MASTER", arg: "NAME",
		usage: "Sentinel master name; the --redis addresses are then the sentinels",
		set:   func(c *Config, v string) error { c.RedisMaster = v; return nil }},
	{flag: "redis-username", env: "ENGINED_REDIS_USERNAME", arg: "USER",
		usage: "Redis ACL user name",
		set:   func(c *Config, v string) error { c.RedisUsername = v; return nil }},
	// A flag's value shows in the process list: the environment is the safer place.
	{flag: "redis-password", env: "ENGINED_REDIS_PASSWORD", arg: "PASSWORD", secret: true,
		usage: "Redis password (prefer the environment variable)",
		set:   func(c *Config, v string) error { c.RedisPassword = v; return nil }},
	{flag: "redis-tls", env: "ENGINED_REDIS_TLS", def: "false",
		usage: "connect to Redis over TLS, verified against the system's roots unless --redis-tls-ca names others",
		set:   func(c *Config, v string) (err error) { c.RedisTLS, err = parseBool(v); return err }},
	{flag: "listen", env: "ENGINED_LISTEN", def: "127.0.0.1:8080", arg: "ADDR",
		usage: "HTTP address",
		set:   func(c *Config, v string) error { c.Listen = v; return checkHostPort(v) }},
	{flag: "assets", env: "ENGINED_ASSETS", def: instructions.DefaultAssets, arg: "CODE:SCALE,...",
		usage: "asset registry: each asset code with its number of decimal places",
		set: func(c *Config, v string) (err error) {
			c.Assets, err = instructions.ParseAssets(v)
			return err
		}},
	{flag: "idempotency-ttl", env: "ENGINED_IDEMPOTENCY_TTL", def: "24h", arg: "DURATION",
		usage: "how long instruction ids are remembered, as a Go duration (90m, 24h)",
		set: func(c *Config, v string) (err error) {
			c.IdempotencyTTL, err = parseDuration(v)
			return err
		}},
	{flag: "tokens", env: "ENGINED_TOKENS", arg: "TOKEN[,TOKEN...]", secret: true,
		usage: "bearer tokens accepted on /v1/, with every scope (prefer the environment variable or --tokens-file)",
		set: func(c *Config, v string) (err error) {
			c.Tokens, err = splitList(v, checkToken)
			return err
		}},
	{flag: "tokens-file", env: "ENGINED_TOKENS_FILE", arg: "FILE",
		usage: "file of bearer tokens, one a line: a token (every scope), or NAME SCOPES TOKEN with SCOPES of read,write,admin, then optionally rate-limit=N rejection-limit=N; read again on SIGHUP",
		set:   func(c *Config, v string) error { c.TokensFile = v; return nil }},
	{flag: "pg", env: "ENGINED_PG_DSN", arg: "DSN", secret: true,
		usage: "PostgreSQL connection string of the ledger",
		set: func(c *Config, v string) error {
			c.PGDSN = v
			if v == "" {
				return nil
			}
			return ledger.CheckDSN(v) // a string that cannot be parsed is refused now, not retried for ever
		}},
	// Not in the contract's table: the project's addition for cross-holder
	// transfers, which the contract leaves at "past a timeout".
	{flag: "transfer-timeout", env: "ENGINED_TRANSFER_TIMEOUT", def: "30s", arg: "DURATION",
		usage: "how long a transfer may stay undecided before the recovery worker aborts it, or decided with parts unfinished before it finishes them",
		set: func(c *Config, v string) (err error) {
			c.TransferTimeout, err = parseDuration(v)
			return err
		}},
	{flag: "hot-sweep", env: "ENGINED_HOT_SWEEP", def: "1s", arg: "DURATION",
		usage: "how often hot holders' receiving lanes are swept into lane 0 (docs/hot-holders.md); 0 turns the sweep off here",
		set: func(c *Config, v string) (err error) {
			if v == "0" {
				c.HotSweep = 0
				return nil
			}
			c.HotSweep, err = parseDuration(v)
			return err
		}},
	// Not in the contract's table either: engine.Options.MinReplicaAcks, for
	// deployments that must not lose an answered instruction in a failover
	// (transfers above all: see docs/transfers.md).
	{flag: "min-replica-acks", env: "ENGINED_MIN_REPLICA_ACKS", def: "0", arg: "N",
		usage: "replicas that must have an instruction's writes before it is answered (WAIT); 0 answers as soon as the master applied it",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 16 {
				return errors.New("want a number of replicas, 0 to 16")
			}
			c.MinReplicaAcks = n
			return nil
		}},
	// Not in the contract's table either: the feed's webhooks (docs/feed.md).
	// A URL may carry credentials: it is never echoed.
	{flag: "webhook", env: "ENGINED_WEBHOOKS", arg: "URL", multi: true, secret: true,
		usage: "POST batches of the feed's events to URL, signed with --webhook-secret (several times, or a comma-separated list; needs --pg)",
		set: func(c *Config, v string) (err error) {
			c.Webhooks, err = splitList(v, checkWebhookURL)
			return err
		}},
	{flag: "webhook-secret", env: "ENGINED_WEBHOOK_SECRET", arg: "SECRET", secret: true,
		usage: "the key of the webhooks' HMAC-SHA256 signatures, at least 16 bytes (prefer the environment variable)",
		set: func(c *Config, v string) error {
			if v != "" && len(v) < 16 {
				return errors.New("want at least 16 bytes")
			}
			c.WebhookSecret = v
			return nil
		}},
	// Not in the contract's table either: Redis over TLS with a private
	// authority and client certificates (docs/security.md). Each implies
	// --redis-tls.
	{flag: "redis-tls-ca", env: "ENGINED_REDIS_TLS_CA", arg: "FILE",
		usage: "PEM file of the certificate authorities that sign the Redis servers' certificates, instead of the system's roots (implies --redis-tls)",
		set:   func(c *Config, v string) error { c.RedisTLSCA = v; return nil }},
	{flag: "redis-tls-cert", env: "ENGINED_REDIS_TLS_CERT", arg: "FILE",
		usage: "PEM file of the client certificate shown to Redis (mutual TLS; with --redis-tls-key; implies --redis-tls)",
		set:   func(c *Config, v string) error { c.RedisTLSCert = v; return nil }},
	{flag: "redis-tls-key", env: "ENGINED_REDIS_TLS_KEY", arg: "FILE",
		usage: "PEM file of the private key of --redis-tls-cert",
		set:   func(c *Config, v string) error { c.RedisTLSKey = v; return nil }},
	{flag: "redis-tls-server-name", env: "ENGINED_REDIS_TLS_SERVER_NAME", arg: "NAME",
		usage: "the name the Redis servers' certificates are verified against, instead of each address's host (implies --redis-tls)",
		set:   func(c *Config, v string) error { c.RedisTLSName = v; return nil }},
	// Not in the contract's table either: limits per token (docs/security.md),
	// which a line of the tokens file may change for its token.
	{flag: "rate-limit", env: "ENGINED_RATE_LIMIT", def: "0", arg: "N",
		usage: "requests a second each token may send to /v1/, one second's worth at once; past it 429 RATE_LIMITED; 0 for no limit",
		set:   func(c *Config, v string) (err error) { c.RateLimit, err = parseLimit(v); return err }},
	{flag: "rejection-limit", env: "ENGINED_REJECTION_LIMIT", def: "0", arg: "N",
		usage: "rejected instructions a second each token may leave remembered for the idempotency TTL; past it its writes are 429 RATE_LIMITED until it is back under; 0 for no limit",
		set:   func(c *Config, v string) (err error) { c.RejectionLimit, err = parseLimit(v); return err }},
}

// configFlags are the shared flags as registered on one command's FlagSet.
type configFlags struct {
	fs   *flag.FlagSet
	vals []*rawValue // parallel to options
}

// addConfigFlags registers every shared flag on fs. Call config after fs.Parse.
func addConfigFlags(fs *flag.FlagSet) *configFlags {
	cf := &configFlags{fs: fs, vals: make([]*rawValue, len(options))}
	for i, o := range options {
		cf.vals[i] = &rawValue{isBool: o.arg == "", multi: o.multi}
		fs.Var(cf.vals[i], o.flag, o.usage)
	}
	return cf
}

// config resolves every setting, after fs.Parse: the flag if it was given,
// else its environment variable if set and not empty, else the default. A
// bad value is an error naming the flag (and the variable it came from).
func (cf *configFlags) config(getenv func(string) string) (*Config, error) {
	given := map[string]bool{}
	cf.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	c := &Config{}
	var errs []error
	for i, o := range options {
		v, from := o.def, "default of --"+o.flag
		switch env := getenv(o.env); {
		case given[o.flag]:
			v, from = cf.vals[i].s, "--"+o.flag
		case env != "":
			v, from = env, o.env+" (--"+o.flag+")"
		}
		if err := o.set(c, v); err != nil {
			if o.secret || strings.Contains(v, "@") { // a URL's user and password are not echoed either
				errs = append(errs, fmt.Errorf("%s: %w", from, err))
			} else {
				errs = append(errs, fmt.Errorf("%s %q: %w", from, v, err))
			}
		}
	}
	if c.RedisMaster != "" && c.RedisCluster {
		errs = append(errs, errors.New("--redis-master and --redis-cluster exclude each other: Sentinel serves a single master"))
	}
	if err := c.loadRedisTLS(); err != nil {
		errs = append(errs, err)
	}
	if len(c.Webhooks) > 0 && c.WebhookSecret == "" {
		errs = append(errs, errors.New("--webhook needs --webhook-secret (ENGINED_WEBHOOK_SECRET): receivers verify each batch by it"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// loadRedisTLS reads the files of the --redis-tls-* flags into the TLS
// configuration of the Redis clients. Any of those flags implies --redis-tls.
func (c *Config) loadRedisTLS() error {
	if c.RedisTLSCA == "" && c.RedisTLSCert == "" && c.RedisTLSKey == "" && c.RedisTLSName == "" {
		return nil
	}
	c.RedisTLS = true
	conf := &tls.Config{ServerName: c.RedisTLSName, MinVersion: tls.VersionTLS12}
	var errs []error
	if c.RedisTLSCA != "" {
		pem, err := os.ReadFile(c.RedisTLSCA)
		conf.RootCAs = x509.NewCertPool()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--redis-tls-ca: %w", err))
		case !conf.RootCAs.AppendCertsFromPEM(pem):
			errs = append(errs, fmt.Errorf("--redis-tls-ca %q: no PEM certificate in the file", c.RedisTLSCA))
		}
	}
	switch {
	case (c.RedisTLSCert == "") != (c.RedisTLSKey == ""):
		errs = append(errs, errors.New("--redis-tls-cert and --redis-tls-key go together: the client certificate and its private key"))
	case c.RedisTLSCert != "":
		cert, err := tls.LoadX509KeyPair(c.RedisTLSCert, c.RedisTLSKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("--redis-tls-cert %q with --redis-tls-key %q: %w", c.RedisTLSCert, c.RedisTLSKey, err))
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	c.redisTLS = conf
	return errors.Join(errs...)
}

// redisTLSConfig is the TLS configuration of the Redis clients, nil without
// --redis-tls. Without the --redis-tls-* flags it is Go's defaults: the
// system's roots, the server name taken from each address, TLS 1.2 or newer.
func (c *Config) redisTLSConfig() *tls.Config {
	switch {
	case !c.RedisTLS:
		return nil
	case c.redisTLS != nil:
		return c.redisTLS.Clone()
	default:
		return &tls.Config{MinVersion: tls.VersionTLS12}
	}
}

// Redis modes of the configuration.
const (
	redisStandalone = "standalone"
	redisCluster    = "cluster"
	redisSentinel   = "sentinel"
)

// clusterStateReloadInterval is how stale a cluster client's slot map may
// get. go-redis reloads it on MOVED and at this interval, not after a
// connection error (go-redis issue 3979): with its default of 60 s, the
// slots of a master that died would keep failing for up to a minute after
// a replica took over.
const clusterStateReloadInterval = time.Second

// redisMode tells which client RedisClient builds.
func (c *Config) redisMode() string {
	switch {
	case c.RedisMaster != "":
		return redisSentinel
	case c.RedisCluster || len(c.RedisAddrs) > 1:
		return redisCluster
	default:
		return redisStandalone
	}
}

// RedisClient builds the go-redis client the configuration asks for: with
// --redis-master, a Sentinel failover client whose sentinels are the
// addresses; with several addresses or --redis-cluster, a cluster client
// (a single address of a cluster node would otherwise get a plain client,
// and MOVED for most keys) that re-reads the slot map every second; else a
// plain client. Context deadlines always reach the socket. The caller
// closes the client.
func (c *Config) RedisClient() redis.UniversalClient {
	tlsConfig := c.redisTLSConfig()
	switch c.redisMode() {
	case redisSentinel:
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:            c.RedisMaster,
			SentinelAddrs:         c.RedisAddrs,
			Username:              c.RedisUsername,
			Password:              c.RedisPassword,
			TLSConfig:             tlsConfig,
			ContextTimeoutEnabled: true,
		})
	case redisCluster:
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:                      c.RedisAddrs,
			Username:                   c.RedisUsername,
			Password:                   c.RedisPassword,
			TLSConfig:                  tlsConfig,
			ContextTimeoutEnabled:      true,
			ClusterStateReloadInterval: clusterStateReloadInterval,
		})
	default:
		return redis.NewClient(&redis.Options{
			Addr:                  c.RedisAddrs[0],
			Username:              c.RedisUsername,
			Password:              c.RedisPassword,
			TLSConfig:             tlsConfig,
			ContextTimeoutEnabled: true,
		})
	}
}

// LogValue is the configuration as logs show it: each secret only says
// whether it is set.
func (c *Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("redis", strings.Join(c.RedisAddrs, ",")),
		slog.String("redis_mode", c.redisMode()),
		slog.String("redis_master", c.RedisMaster),
		slog.String("redis_username", c.RedisUsername),
		slog.Bool("redis_password_set", c.RedisPassword != ""),
		slog.Bool("redis_tls", c.RedisTLS),
		slog.String("redis_tls_ca", c.RedisTLSCA),
		slog.String("redis_tls_cert", c.RedisTLSCert),
		slog.String("redis_tls_server_name", c.RedisTLSName),
		slog.String("listen", c.Listen),
		slog.String("assets", c.Assets.String()),
		slog.String("idempotency_ttl", c.IdempotencyTTL.String()),
		slog.Int("tokens", len(c.Tokens)),
		slog.String("tokens_file", c.TokensFile),
		slog.Bool("pg_set", c.PGDSN != ""),
		slog.String("transfer_timeout", c.TransferTimeout.String()),
		slog.String("hot_sweep", c.HotSweep.String()),
		slog.Int("min_replica_acks", c.MinReplicaAcks),
		slog.Int("webhooks", len(c.Webhooks)),
		slog.Bool("webhook_secret_set", c.WebhookSecret != ""),
		slog.Int("rate_limit", c.RateLimit),
		slog.Int("rejection_limit", c.RejectionLimit),
	)
}

// EngineOptions gives the engine's options of the configuration.
func (c *Config) EngineOptions() *engine.Options {
	return &engine.Options{Assets: c.Assets, IdempotencyTTL: c.IdempotencyTTL, TransferTimeout: c.TransferTimeout,
		MinReplicaAcks: c.MinReplicaAcks}
}

// printConfigUsage lists the shared flags with their variables and defaults.
func printConfigUsage(w io.Writer) {
	for _, o := range options {
		name := "--" + o.flag
		if o.arg != "" {
			name += " " + o.arg
		}
		fmt.Fprintf(w, "  %s\n        %s\n        (%s", name, o.usage, o.env)
		if o.def != "" && o.def != "false" {
			fmt.Fprintf(w, "; default %s", o.def)
		}
		fmt.Fprint(w, ")\n")
	}
}

// rawValue is a flag's text, checked only once the environment is known, so
// that a flag and its variable are parsed by the same code. A switch
// (isBool) may be given without a value, as in --redis-cluster; a multi
// flag given again adds to the list.
type rawValue struct {
	s      string
	isBool bool
	multi  bool
}

func (v *rawValue) String() string {
	if v == nil {
		return ""
	}
	return v.s
}

func (v *rawValue) Set(s string) error {
	if v.multi && v.s != "" {
		s = v.s + "," + s
	}
	v.s = s
	return nil
}
func (v *rawValue) IsBoolFlag() bool { return v.isBool }

// splitList splits a comma-separated list, checking each item.
func splitList(v string, check func(string) error) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	items := strings.Split(v, ",")
	for i, item := range items {
		items[i] = strings.TrimSpace(item)
		if items[i] == "" {
			return nil, fmt.Errorf("item %d of the list is empty", i+1)
		}
		if err := check(items[i]); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// checkWebhookURL wants an absolute http or https URL. It never quotes the
// URL, which may hold credentials.
func checkWebhookURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("a webhook is not an absolute http:// or https:// URL")
	}
	return nil
}

func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number in 1..65535", port)
	}
	return nil
}

// checkToken refuses what an Authorization header could not carry. It never
// quotes the token.
func checkToken(tok string) error {
	for _, r := range tok {
		if r <= ' ' || r >= 0x7f {
			return errors.New("a token contains a space, a control or a non-ASCII character")
		}
	}
	return nil
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}

// parseDuration reads the idempotency TTL or the transfer timeout. The
// engine hands them to Redis in whole milliseconds, so less than one is
// refused rather than rounded to none.
func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("want a Go duration such as 90m or 24h")
	}
	if d < time.Millisecond {
		return 0, errors.New("must be at least 1ms")
	}
	return d, nil
}
