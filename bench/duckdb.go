package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// DuckDB is one in-memory DuckDB database on a single connection (temp
// tables and SET are per connection). The dataset is loaded once per shape
// with the Appender and shared by the DuckDB engines of every thread count.
type DuckDB struct {
	db     *sql.DB
	conn   *sql.Conn
	loaded *Dataset
}

// OpenDuckDB opens an in-memory database.
func OpenDuckDB(ctx context.Context) (*DuckDB, error) {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("open DuckDB: %w", err)
	}
	db := sql.OpenDB(c)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to DuckDB: %w", err)
	}
	return &DuckDB{db: db, conn: conn}, nil
}

// Close closes the connection and the database.
func (d *DuckDB) Close() error {
	err := d.conn.Close()
	if cerr := d.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Version is DuckDB's version string.
func (d *DuckDB) Version(ctx context.Context) (string, error) {
	var v string
	err := d.conn.QueryRowContext(ctx, "SELECT version()").Scan(&v)
	return v, err
}

// Load replaces the tables with the dataset's: l and r1..rN, with the
// inputs' column names and types. It is a no-op when d is already loaded.
func (d *DuckDB) Load(ctx context.Context, ds *Dataset) error {
	if d.loaded == ds {
		return nil
	}
	if err := d.Unload(ctx); err != nil {
		return err
	}
	for _, in := range append([]Input{ds.Left}, ds.Rights...) {
		if err := d.loadInput(ctx, in); err != nil {
			return fmt.Errorf("load %s into DuckDB: %w", in.Name, err)
		}
	}
	d.loaded = ds
	return nil
}

// Unload drops the loaded tables.
func (d *DuckDB) Unload(ctx context.Context) error {
	if d.loaded == nil {
		return nil
	}
	for _, in := range append([]Input{d.loaded.Left}, d.loaded.Rights...) {
		if _, err := d.conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+in.Name); err != nil {
			return err
		}
	}
	d.loaded = nil
	return nil
}

func (d *DuckDB) loadInput(ctx context.Context, in Input) error {
	var cols []string
	for _, f := range in.Schema.Fields() {
		var t string
		switch f.Type.ID() {
		case arrow.INT64:
			t = "BIGINT"
		case arrow.FLOAT64:
			t = "DOUBLE"
		case arrow.STRING:
			t = "VARCHAR"
		default:
			return sqlerr.New(sqlerr.DatatypeMismatch, "input %s: column %s has type %s; want int64, float64 or utf8", in.Name, f.Name, f.Type)
		}
		cols = append(cols, f.Name+" "+t)
	}
	ddl := fmt.Sprintf("CREATE OR REPLACE TABLE %s (%s)", in.Name, strings.Join(cols, ", "))
	if _, err := d.conn.ExecContext(ctx, ddl); err != nil {
		return err
	}
	return d.conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return sqlerr.New(sqlerr.InternalError, "DuckDB connection is %T, not a driver.Conn", dc)
		}
		app, err := duckdb.NewAppender(dconn, "", "", in.Name)
		if err != nil {
			return err
		}
		row := make([]driver.Value, len(cols))
		for _, b := range in.Batches {
			for i := 0; i < int(b.NumRows()); i++ {
				for j, c := range b.Columns() {
					switch c := c.(type) {
					case *array.Int64:
						row[j] = c.Value(i)
					case *array.Float64:
						row[j] = c.Value(i)
					case *array.String:
						row[j] = c.Value(i)
					default:
						app.Close()
						return sqlerr.New(sqlerr.DatatypeMismatch, "input %s: column %d has type %s", in.Name, j, c.DataType())
					}
				}
				if err := app.AppendRow(row...); err != nil {
					app.Close()
					return err
				}
			}
		}
		return app.Close()
	})
}

// DuckDBEngine runs a shape's join in DuckDB with a fixed thread count.
type DuckDBEngine struct {
	DB      *DuckDB
	Threads int
	query   string
	shape   Shape
}

var _ Engine = (*DuckDBEngine)(nil)

func (e *DuckDBEngine) Name() string { return fmt.Sprintf("DuckDB %dT", e.Threads) }

// Supports: every shape (a range it cannot spell fails in Prepare).
func (e *DuckDBEngine) Supports(Shape) bool { return true }

func (e *DuckDBEngine) Prepare(ctx context.Context, ds *Dataset) error {
	q, err := ShapeSQL(ds.Shape)
	if err != nil {
		return err
	}
	e.query, e.shape = q, ds.Shape
	return e.DB.Load(ctx, ds)
}

func (e *DuckDBEngine) Finish() error { return e.DB.Unload(context.Background()) }

// Run materialises the join with CREATE TEMP TABLE ... AS (the timed
// part), then reads the summary from that table and drops it.
func (e *DuckDBEngine) Run(ctx context.Context, p *Probe) (Measure, Summary, error) {
	if _, err := e.DB.conn.ExecContext(ctx, fmt.Sprintf("SET threads = %d", e.Threads)); err != nil {
		return Measure{}, Summary{}, err
	}
	if _, err := e.DB.conn.ExecContext(ctx, "DROP TABLE IF EXISTS temp.out"); err != nil {
		return Measure{}, Summary{}, err
	}
	p.Begin()
	_, err := e.DB.conn.ExecContext(ctx, "CREATE TEMP TABLE out AS "+e.query)
	m := p.End()
	if err != nil {
		return m, Summary{}, fmt.Errorf("DuckDB join: %w", err)
	}
	sum, err := e.summary(ctx)
	if _, derr := e.DB.conn.ExecContext(ctx, "DROP TABLE temp.out"); err == nil {
		err = derr
	}
	return m, sum, err
}

func (e *DuckDBEngine) summary(ctx context.Context) (Summary, error) {
	if e.shape.IsQuery() {
		return e.querySummary(ctx)
	}
	rights := e.shape.Rights
	row := e.DB.conn.QueryRowContext(ctx, ChecksumSQL("temp.out", rights))
	dest := make([]any, 1+2*rights)
	var rows int64
	nulls := make([]int64, rights)
	sums := make([]string, rights)
	dest[0] = &rows
	for i := 0; i < rights; i++ {
		dest[1+2*i], dest[2+2*i] = &nulls[i], &sums[i]
	}
	if err := row.Scan(dest...); err != nil {
		return Summary{}, fmt.Errorf("DuckDB summary: %w", err)
	}
	s := Summary{Rows: rows, Nulls: nulls, Sums: make([]Sum128, rights)}
	for i, v := range sums {
		var err error
		if s.Sums[i], err = ParseSum128(v); err != nil {
			return Summary{}, err
		}
	}
	return s, nil
}

// querySummary checks an operator shape's result table (QuerySpec): the
// same checksum as QuerySummarizer, and no wrong average or row out of
// order (the table keeps the query's row order: DuckDB preserves insertion
// order, and rowid numbers the rows in it).
func (e *DuckDBEngine) querySummary(ctx context.Context) (Summary, error) {
	spec := e.shape.Query
	var rows, avgBad int64
	var sum string
	if err := e.DB.conn.QueryRowContext(ctx, QuerySummarySQL("temp.out", spec)).Scan(&rows, &sum, &avgBad); err != nil {
		return Summary{}, fmt.Errorf("DuckDB summary: %w", err)
	}
	if avgBad != 0 {
		return Summary{}, sqlerr.New(sqlerr.DataException, "DuckDB: %d result rows have an average other than sum / count", avgBad)
	}
	if q := QueryOrderSQL("temp.out", spec); q != "" {
		var bad int64
		if err := e.DB.conn.QueryRowContext(ctx, q).Scan(&bad); err != nil {
			return Summary{}, fmt.Errorf("DuckDB order check: %w", err)
		}
		if bad != 0 {
			return Summary{}, sqlerr.New(sqlerr.DataException, "DuckDB: %d result rows are out of order", bad)
		}
	}
	cs, err := ParseSum128(sum)
	if err != nil {
		return Summary{}, err
	}
	return Summary{Rows: rows, Sums: []Sum128{cs}}, nil
}

// ChecksumSQL computes Summary over a result table with columns t, rt1,
// rp1, ...: the same formula as Sum128.checksumTerm, in HUGEINT.
func ChecksumSQL(table string, rights int) string {
	var b strings.Builder
	b.WriteString("SELECT count(*)")
	for i := 1; i <= rights; i++ {
		fmt.Fprintf(&b, ",\n  count(*) FILTER (WHERE rp%[1]d IS NULL),\n"+
			"  CAST(COALESCE(sum((CAST(rp%[1]d * %[2]d AS HUGEINT) + rt%[1]d) * (t %% %[3]d + 1)), 0) AS VARCHAR)",
			i, int64(payloadUnit), checksumMod)
	}
	fmt.Fprintf(&b, "\nFROM %s", table)
	return b.String()
}

// JoinSQL is DuckDB's spelling of the shape's join, producing the columns
// t, k, lp, then rt<i>, rp<i> for each right input r<i>: the same columns
// asofsql materialises. DuckDB's ASOF join has one inequality and no
// range, so:
//
//   - Backward unbounded (Lo = -inf, Hi = 0) is its native
//     `ASOF LEFT JOIN r ON l.k = r.k AND l.t >= r.t`.
//   - Backward with a finite range [Lo, 0] runs that join, then NULLs the
//     right columns when l.t - r.t > -Lo. This is exact: the unbounded
//     join finds the latest right row at or before l.t; if it is within
//     -Lo it is also the closest row in range, and if it is not, no row in
//     range exists (any such row would be later than the latest one).
//   - A two-sided range [Lo, Hi] with Lo < 0 < Hi (nearest) runs a
//     backward and a forward (`l.t <= r.t`) ASOF join of the same table,
//     keeps each side only when within its bound, and picks the closer,
//     the backward one at equal distance: the spec's PREFER EARLIER
//     default. By the same argument as above each side's nearest row is
//     the best in-range candidate on that side.
//
// Several right inputs chain one ASOF join per input; the spec defines the
// multi-input operator's answer as that chain's. DuckDB picks an arbitrary
// row among right rows with equal t; the generator never produces any.
func JoinSQL(s Shape) (string, error) {
	if s.Rights < 1 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "shape %s has no right input", s.Name)
	}
	var cols, from []string
	cols = append(cols, "l.t", "l.k", "l.lp")
	from = append(from, "l")
	for i := 1; i <= s.Rights; i++ {
		r := fmt.Sprintf("r%d", i)
		switch {
		case !s.Hi.Unbounded && s.Hi.Int == 0 && (s.Lo.Unbounded || s.Lo.Int <= 0):
			from = append(from, fmt.Sprintf("ASOF LEFT JOIN %[1]s ON l.k = %[1]s.k AND l.t >= %[1]s.t", r))
			if s.Lo.Unbounded {
				cols = append(cols, fmt.Sprintf("%[1]s.t AS rt%[2]d", r, i), fmt.Sprintf("%[1]s.rp AS rp%[2]d", r, i))
			} else {
				in := fmt.Sprintf("l.t - %s.t <= %d", r, -s.Lo.Int)
				cols = append(cols,
					fmt.Sprintf("CASE WHEN %s THEN %s.t END AS rt%d", in, r, i),
					fmt.Sprintf("CASE WHEN %s THEN %s.rp END AS rp%d", in, r, i))
			}
		case (s.Lo.Unbounded || s.Lo.Int < 0) && (s.Hi.Unbounded || s.Hi.Int > 0):
			b, f := fmt.Sprintf("b%d", i), fmt.Sprintf("f%d", i)
			from = append(from,
				fmt.Sprintf("ASOF LEFT JOIN %[1]s AS %[2]s ON l.k = %[2]s.k AND l.t >= %[2]s.t", r, b),
				fmt.Sprintf("ASOF LEFT JOIN %[1]s AS %[2]s ON l.k = %[2]s.k AND l.t <= %[2]s.t", r, f))
			bIn := b + ".t IS NOT NULL"
			if !s.Lo.Unbounded {
				bIn = fmt.Sprintf("l.t - %s.t <= %d", b, -s.Lo.Int)
			}
			fIn := f + ".t IS NOT NULL"
			if !s.Hi.Unbounded {
				fIn = fmt.Sprintf("%s.t - l.t <= %d", f, s.Hi.Int)
			}
			// NULL comparisons are not true, so an absent side never wins.
			useB := fmt.Sprintf("(%s) AND (%s.t IS NULL OR NOT (%s) OR l.t - %s.t <= %s.t - l.t)", bIn, f, fIn, b, f)
			cols = append(cols,
				fmt.Sprintf("CASE WHEN %s THEN %s.t WHEN %s THEN %s.t END AS rt%d", useB, b, fIn, f, i),
				fmt.Sprintf("CASE WHEN %s THEN %s.rp WHEN %s THEN %s.rp END AS rp%d", useB, b, fIn, f, i))
		default:
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "shape %s: range %s has no DuckDB equivalent in this benchmark",
				s.Name, rangeString(s.Lo, s.Hi)).
				WithHint("Supported: backward ranges [lo, 0] and two-sided ranges with lo < 0 < hi.")
		}
	}
	return "SELECT " + strings.Join(cols, ", ") + "\nFROM " + strings.Join(from, "\n  "), nil
}
