package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/gantry-dev/gantry/bench/casegen"
)

// pgState measures the PostgreSQL state backend against the file backend:
// the same no-op deploy of n components, from no state, with -s FILE and
// with -s postgres://..., back to back in each round, the order rotating.
// It prints the per-round ratio (PostgreSQL / file) and the transactions
// the database committed per component — each a round trip, since gantry
// sends every batch as one pipeline.
func pgState(ctx context.Context, o options, dsn string, n int) error {
	dir := filepath.Join(o.work, fmt.Sprintf("pgstate-random-%d", n))
	c, err := casegen.Generate(dir, "random", n, 1, "noop")
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to the benchmark's database: %w", err)
	}
	defer conn.Close(ctx)
	u, err := url.Parse(dsn)
	if err != nil {
		return err
	}
	db := strings.TrimPrefix(u.Path, "/")
	forgetPG := func() error {
		// Before the first run there are no tables yet.
		_, _ = conn.Exec(ctx, `DELETE FROM gantry_stacks WHERE stack = $1`, fmt.Sprintf("bench-random-%d", n))
		return forgetState(dir)
	}
	commits := func() (int64, error) {
		// pg_stat_database lags by up to the stats flush interval: ask for
		// a fresh snapshot.
		_, _ = conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
		var x int64
		err := conn.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, db).Scan(&x)
		return x, err
	}
	args := func(t int) []string {
		a := []string{"deploy", "--parallel", fmt.Sprint(o.parallel), "hub.yaml"}
		if t == 1 {
			a = append(a, "-s", dsn)
		}
		return a
	}
	var file, pg []sample
	var perComp []float64
	for r := -1; r < o.rounds; r++ {
		for _, t := range order(2, r) {
			if err := forgetPG(); err != nil {
				return err
			}
			before, err := commits()
			if err != nil {
				return err
			}
			s, err := measure(ctx, o, dir, o.gantry, args(t)...)
			if err != nil {
				return err
			}
			after, err := commits()
			if err != nil {
				return err
			}
			if r < 0 {
				continue
			}
			if t == 0 {
				file = append(file, s)
			} else {
				pg = append(pg, s)
				perComp = append(perComp, float64(after-before)/float64(c.N))
			}
		}
	}
	fs, ps := statsOf(file), statsOf(pg)
	fmt.Printf("# state backends, no-op random-%d, P=%d, %d rounds: file %s ms, postgres %s ms (medians); postgres/file %s; postgres transactions (round trips) per component %.2f\n",
		n, o.parallel, o.rounds, ms(fs.wall), ms(ps.wall), spreadOf(ratios(pg, file)), median(perComp))
	fmt.Printf("pg_over_file=%.2f\n", spreadOf(ratios(pg, file)).med)
	return nil
}
