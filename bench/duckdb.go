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
	keyType := "BIGINT"
	if in.Schema.Field(1).Type.ID() != arrow.INT64 {
		keyType = "VARCHAR"
	}
	ddl := fmt.Sprintf("CREATE OR REPLACE TABLE %s (t BIGINT, k %s, %s DOUBLE)", in.Name, keyType, in.Schema.Field(2).Name)
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
		for _, b := range in.Batches {
			ts, ok1 := b.Column(0).(*array.Int64)
			ps, ok2 := b.Column(2).(*array.Float64)
			ik, _ := b.Column(1).(*array.Int64)
			sk, _ := b.Column(1).(*array.String)
			if !ok1 || !ok2 || (ik == nil && sk == nil) {
				app.Close()
				return sqlerr.New(sqlerr.DatatypeMismatch, "input %s has columns %s, %s, %s; want int64, int64 or utf8, float64",
					in.Name, b.Column(0).DataType(), b.Column(1).DataType(), b.Column(2).DataType())
			}
			for i := 0; i < int(b.NumRows()); i++ {
				var k driver.Value
				if ik != nil {
					k = ik.Value(i)
				} else {
					k = sk.Value(i)
				}
				if err := app.AppendRow(ts.Value(i), k, ps.Value(i)); err != nil {
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
	rights  int
}

var _ Engine = (*DuckDBEngine)(nil)

func (e *DuckDBEngine) Name() string { return fmt.Sprintf("DuckDB %dT", e.Threads) }

func (e *DuckDBEngine) Prepare(ctx context.Context, ds *Dataset) error {
	q, err := JoinSQL(ds.Shape)
	if err != nil {
		return err
	}
	e.query, e.rights = q, ds.Shape.Rights
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
	row := e.DB.conn.QueryRowContext(ctx, ChecksumSQL("temp.out", e.rights))
	dest := make([]any, 1+2*e.rights)
	var rows int64
	nulls := make([]int64, e.rights)
	sums := make([]string, e.rights)
	dest[0] = &rows
	for i := 0; i < e.rights; i++ {
		dest[1+2*i], dest[2+2*i] = &nulls[i], &sums[i]
	}
	if err := row.Scan(dest...); err != nil {
		return Summary{}, fmt.Errorf("DuckDB summary: %w", err)
	}
	s := Summary{Rows: rows, Nulls: nulls, Sums: make([]Sum128, e.rights)}
	for i, v := range sums {
		var err error
		if s.Sums[i], err = ParseSum128(v); err != nil {
			return Summary{}, err
		}
	}
	return s, nil
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
