package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/atomledger/atomledger/instructions"
)

// Options configure a Ledger. A nil *Options or a zero field means the default.
type Options struct {
	// Logger receives gaps, refusals and conflicts. Default: slog.Default().
	Logger *slog.Logger
	// Assets gives the scales a statement shows amounts at. Default:
	// instructions.DefaultAssets.
	Assets *instructions.Registry
}

// Ledger is the PostgreSQL ledger. It is safe for concurrent use; several
// processes may write to one database (a holder's rows are locked while its
// events apply).
type Ledger struct {
	pool   *pgxpool.Pool
	log    *slog.Logger
	assets *instructions.Registry
	stats  struct {
		batches, applied, duplicates, conflicts, parked, unparked, refused, setAside atomic.Int64
	}
}

// errBadDSN is the error of a connection string pgx cannot parse. pgx's
// own quotes the string, whose password it hides in some spellings only
// (not "password = x"), and so may the error it wraps (a URL's).
var errBadDSN = errors.New("the connection string cannot be parsed (not shown: it may hold a password)")

// CheckDSN tells whether dsn is a connection string Open can use, without
// connecting: a configuration checks it before anything waits for the
// database.
func CheckDSN(dsn string) error {
	_, err := parseDSN(dsn)
	return err
}

func parseDSN(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errBadDSN
	}
	return cfg, nil
}

// Open connects to the database at dsn and migrates its schema.
func Open(ctx context.Context, dsn string, opt *Options) (*Ledger, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	// The pool connects lazily: without this, a server that cannot be
	// reached would be reported as a failed migration.
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open ledger: cannot connect to PostgreSQL: %w", err)
	}
	l, err := New(ctx, pool, opt)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return l, nil
}

// New builds a Ledger on a pool and migrates the schema. Close leaves the
// pool open.
func New(ctx context.Context, pool *pgxpool.Pool, opt *Options) (*Ledger, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Assets == nil {
		o.Assets = instructions.MustParseAssets(instructions.DefaultAssets)
	}
	if _, err := Migrate(ctx, pool); err != nil {
		return nil, err
	}
	return &Ledger{pool: pool, log: o.Logger, assets: o.Assets}, nil
}

// Pool gives the connection pool.
func (l *Ledger) Pool() *pgxpool.Pool { return l.pool }

// Close closes the pool.
func (l *Ledger) Close() { l.pool.Close() }

// Stats are the sink's counters since the Ledger was built.
type Stats struct {
	Batches    int64 // committed batches
	Applied    int64 // events applied
	Duplicates int64 // events skipped as already applied
	Conflicts  int64 // duplicates that differ from what was applied
	Parked     int64 // events parked behind a gap
	Unparked   int64 // parked events applied once their gap filled
	Refused    int64 // duplicates refused as conflicts
	SetAside   int64 // events set aside: PostgreSQL refused them, malformed, or their digest does not chain
}

// Stats reads the counters.
func (l *Ledger) Stats() Stats {
	s := &l.stats
	return Stats{Batches: s.batches.Load(), Applied: s.applied.Load(), Duplicates: s.duplicates.Load(),
		Conflicts: s.conflicts.Load(), Parked: s.parked.Load(), Unparked: s.unparked.Load(), Refused: s.refused.Load(),
		SetAside: s.setAside.Load()}
}

// Gaps counts the events parked now, waiting for the ones before them.
func (l *Ledger) Gaps(ctx context.Context) (int64, error) {
	var n int64
	err := l.pool.QueryRow(ctx, "SELECT count(*) FROM ledger.parked").Scan(&n)
	return n, err
}
