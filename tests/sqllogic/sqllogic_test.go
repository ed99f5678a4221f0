package sqllogic

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/stretchr/testify/require"
)

var (
	update = flag.Bool("update", false, "rewrite the expected results of failing queries (embedded mode) for a human to review")
	only   = flag.String("file", "", "run only the files whose path under testdata contains this (e.g. asof/basic)")
	pgDSN  = flag.String("pg", "", "also run the files without `require asof` against this PostgreSQL (a fresh database per file), to check expectations")
)

// wireServer starts asofsql's pgwire server for db on a loopback port and
// returns a pgx DSN; the server stops when t ends (wire_test.go sets it;
// the wire mode is skipped if it is nil).
var wireServer func(t testing.TB, db *asofsql.DB) string

// flightServer starts asofsql's Flight SQL server for db on a loopback
// port and returns its address (flight_test.go sets it).
var flightServer func(t testing.TB, db *asofsql.DB) string

// files lists the .slt files under testdata, filtered by -file.
func files(t *testing.T) []string {
	var out []string
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".slt") && strings.Contains(p, *only) {
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	require.NotEmpty(t, out, "no .slt file matches -file=%q", *only)
	return out
}

// dataDir copies testdata/data (the files COPY reads) into a fresh
// directory: COPY ... TO writes there, so each file starts clean.
func dataDir(t *testing.T) string {
	dir := t.TempDir()
	ents, err := os.ReadDir("testdata/data")
	require.NoError(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata/data", e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	return dir
}

type modeTotals struct{ passed, failed, skipped int }

func TestSQLLogic(t *testing.T) {
	totals := map[string]*modeTotals{}
	for _, path := range files(t) {
		rel := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(path), "testdata/"), ".slt")
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		recs, err := Parse(path, strings.NewReader(string(src)))
		require.NoError(t, err)

		// Every file runs serial (max_parallel_workers_per_gather 1) and
		// at 4 workers: embedded at both, the wire at 4 and the extended
		// protocol and Flight SQL at 1. Files tell the two apart with onlyif/skipif
		// serial or parallel (EXPLAIN shows the degree).
		type run struct {
			mode    string
			workers int
		}
		runs := []run{{"embedded", 1}, {"embedded", 4}, {"wire", 4}, {"extended", 1}, {"flight", 1}}
		if *pgDSN != "" {
			runs = append(runs, run{"postgres", 1})
		}
		for _, rn := range runs {
			mode := rn.mode
			name := fmt.Sprintf("%s/workers=%d/%s", mode, rn.workers, rel)
			if mode == "postgres" {
				name = mode + "/" + rel
			}
			t.Run(name, func(t *testing.T) {
				if (mode == "wire" || mode == "extended") && wireServer == nil {
					t.Skip("no wire server (wireServer is nil)")
				}
				if mode == "flight" && flightServer == nil {
					t.Skip("no Flight SQL server (flightServer is nil)")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				r := &Runner{Mode: mode, Caps: map[string]bool{"asof": mode != "postgres", CapCopyStdin: mode != "flight"}, HashThreshold: 40}
				if mode != "postgres" {
					r.Aliases = []string{"asofsql"}
					if mode == "extended" {
						r.Aliases = append(r.Aliases, "wire") // both protocols are the wire
					}
					if rn.workers > 1 {
						r.Aliases = append(r.Aliases, "parallel")
					} else {
						r.Aliases = append(r.Aliases, "serial")
					}
				}
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				var c Conn
				switch mode {
				case "postgres":
					c = pgConn(t, ctx, rel)
				default:
					db, err := asofsql.Open(":memory:", asofsql.WithAllocator(mem), asofsql.WithFileDir(dataDir(t)),
						asofsql.WithWorkers(rn.workers),
						// The files' tables are small: at 4 workers every
						// gather is parallel, what the runs compare.
						asofsql.WithMinParallelTableScanSize(0))
					require.NoError(t, err)
					// a cleanup, not a defer: the wire server registered
					// after it must shut down before the database closes
					t.Cleanup(func() {
						require.NoError(t, db.Close())
						// Over Flight SQL a client's disconnect ends its
						// sessions on gRPC's goroutines, which may still be
						// releasing (temp tables) when the server's shutdown
						// returns, and a result frame gRPC dropped for a
						// stream it had cleaned up is released when it is
						// collected (flightsql/codec.go): give them a moment,
						// and the collector a run, before counting.
						for wait := 0; wait < 100 && mem.CurrentAlloc() != 0; wait++ {
							runtime.GC()
							time.Sleep(20 * time.Millisecond)
						}
						mem.AssertSize(t, 0)
					})
					switch mode {
					case "embedded":
						c = &Embedded{S: db.Session()}
					case "flight":
						f, err := DialFlight(ctx, flightServer(t, db))
						require.NoError(t, err)
						c = f
					default:
						w, err := DialWire(ctx, wireServer(t, db))
						require.NoError(t, err)
						w.Extended = mode == "extended"
						c = w
					}
				}
				res := r.Run(ctx, path, recs, c)
				require.NoError(t, c.Close())
				for _, f := range res.Failures {
					t.Error(f.String())
				}
				tot := totals[mode]
				if tot == nil {
					tot = &modeTotals{}
					totals[mode] = tot
				}
				tot.passed += res.Passed
				tot.failed += res.Failed
				tot.skipped += res.Skipped
				t.Logf("%s [%s]: %d passed, %d failed, %d skipped", rel, mode, res.Passed, res.Failed, res.Skipped)
				if *update && mode == "embedded" && rn.workers == 1 && len(res.Updates) > 0 {
					lines := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
					out := Rewrite(lines, res.Updates)
					require.NoError(t, os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644))
					t.Logf("%s: rewrote %d results; review the diff before committing", path, len(res.Updates))
				}
			})
		}
	}
	for _, mode := range []string{"embedded", "wire", "extended", "flight", "postgres"} {
		if tot := totals[mode]; tot != nil {
			fmt.Printf("sqllogic [%s]: %d passed, %d failed (%d skipped)\n", mode, tot.passed, tot.failed, tot.skipped)
		}
	}
}

// pgConn creates a fresh database for one file on the -pg server and
// connects to it; the database is dropped when t ends.
func pgConn(t *testing.T, ctx context.Context, rel string) Conn {
	admin, err := DialWire(ctx, *pgDSN)
	require.NoError(t, err)
	defer admin.Close()
	name := "slt_" + strings.NewReplacer("/", "_", "-", "_").Replace(rel)
	_, err = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name)
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		a, err := DialWire(context.Background(), *pgDSN)
		if err == nil {
			_, _ = a.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			a.Close()
		}
	})
	cfg := admin.C.Config().ConnString()
	w, err := DialWire(ctx, replaceDB(cfg, name))
	require.NoError(t, err)
	return w
}

// replaceDB points a key=value or URL DSN at another database.
func replaceDB(dsn, db string) string {
	if strings.Contains(dsn, "://") {
		if i := strings.LastIndex(dsn, "/"); i > strings.Index(dsn, "://")+2 {
			rest := ""
			if q := strings.Index(dsn[i:], "?"); q >= 0 {
				rest = dsn[i+q:]
			}
			return dsn[:i+1] + db + rest
		}
		return dsn + "/" + db
	}
	return dsn + " dbname=" + db
}
