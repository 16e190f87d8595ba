package ledger

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions, "<version>_<name>.sql", applied in
// order. A released file never changes: a change is a new file.
//
//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the advisory lock key that serialises migrations between
// processes starting at once.
const migrationLock = 0x61746f6d6c6564 // "atomled"

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, f := range files {
		base := strings.TrimPrefix(f, "migrations/")
		v, name, ok := strings.Cut(strings.TrimSuffix(base, ".sql"), "_")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n <= 0 {
			return nil, fmt.Errorf("migration %s: want <version>_<name>.sql", base)
		}
		body, err := migrations.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: n, name: name, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migration version %d twice", ms[i].version)
		}
	}
	return ms, nil
}

// Migrate applies the migrations the database lacks, each in its own
// transaction, and returns the schema version. Running it again does
// nothing.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	ms, err := loadMigrations()
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	version := 0
	for _, m := range ms {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS ledger;
				CREATE TABLE IF NOT EXISTS ledger.schema_migrations (
					version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
				return err
			}
			var done bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM ledger.schema_migrations WHERE version = $1)", m.version).Scan(&done); err != nil {
				return err
			}
			if done {
				return nil
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO ledger.schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return version, fmt.Errorf("migrate to version %d (%s): %w", m.version, m.name, err)
		}
		version = m.version
	}
	return version, nil
}
