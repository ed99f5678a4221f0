package flightsql_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/flightsql"
)

// quotesReader yields n quotes in batches of 64K rows, ts descending (so
// an ordered table must sort them) or, with ascending, in time order as
// a feed delivers them; sym cycles through 100 keys as a dictionary column
// (the engine stores text), bid is float32 (stored as double precision).
func quotesReader(t testing.TB, n int, schema *arrow.Schema, ascending ...bool) array.RecordReader {
	t.Helper()
	mem := memory.DefaultAllocator
	db := array.NewStringBuilder(mem)
	for i := range 100 {
		db.Append(symName(i))
	}
	dict := db.NewArray()
	db.Release()
	defer dict.Release()
	var batches []arrow.RecordBatch
	for lo := 0; lo < n; lo += 1 << 16 {
		hi := min(n, lo+1<<16)
		ts := make([]int64, hi-lo)
		idx := make([]int16, hi-lo)
		bid := make([]float32, hi-lo)
		for i := lo; i < hi; i++ {
			ts[i-lo], idx[i-lo], bid[i-lo] = int64(n-i), int16(i%100), float32(i%1000)+0.5
			if len(ascending) > 0 && ascending[0] {
				ts[i-lo] = int64(i + 1)
			}
		}
		tsA := array.NewData(arrow.PrimitiveTypes.Int64, len(ts), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ts))}, nil, 0, 0)
		idxA := array.NewData(arrow.PrimitiveTypes.Int16, len(idx), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int16Traits.CastToBytes(idx))}, nil, 0, 0)
		bidA := array.NewData(arrow.PrimitiveTypes.Float32, len(bid), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(bid))}, nil, 0, 0)
		cols := []arrow.Array{array.MakeFromData(tsA), array.NewDictionaryArray(schema.Field(1).Type, array.MakeFromData(idxA), dict), array.MakeFromData(bidA)}
		batches = append(batches, array.NewRecordBatch(schema, cols, int64(hi-lo)))
		for _, c := range cols {
			c.Release()
		}
		tsA.Release()
		idxA.Release()
		bidA.Release()
	}
	rdr, err := array.NewRecordReader(schema, batches)
	require.NoError(t, err)
	for _, b := range batches {
		b.Release()
	}
	return rdr
}

func symName(i int) string { return string(rune('A'+i%26)) + string(rune('a'+i/26)) }

// appendOnly appends to an existing table (ADBC's "append" mode).
var appendOnly = &afsql.TableDefinitionOptions{IfNotExist: afsql.TableDefinitionOptionsTableNotExistOptionFail,
	IfExists: afsql.TableDefinitionOptionsTableExistsOptionAppend}

var quotesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "ts", Type: arrow.PrimitiveTypes.Int64},
	{Name: "sym", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "bid", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
}, nil)

// TestIngestMillion: 1M rows, in time order as a feed sends them, into an
// ordered table in one ingest: all counted, the table scans in order, and
// ASOF joins against it. (TestIngestModes has an ingest out of order.)
func TestIngestMillion(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()
	exec(t, c, `CREATE TABLE quotes (ts BIGINT NOT NULL, sym TEXT, bid DOUBLE PRECISION) ORDER BY (ts)`)
	const n = 1_000_000
	rdr := quotesReader(t, n, quotesSchema, true)
	defer rdr.Release()
	got, err := c.ExecuteIngest(ctx, rdr, &afsql.ExecuteIngestOpts{Table: "quotes", TableDefinitionOptions: appendOnly})
	require.NoError(t, err)
	require.EqualValues(t, n, got)
	require.Equal(t, [][]string{{"1000000", "1", "1000000"}}, query(t, c, `SELECT count(*), min(ts), max(ts) FROM quotes`))
	// Ordered: the first rows of a plain scan are the smallest ts.
	require.Equal(t, [][]string{{"1", "Aa", "0.5"}, {"2", "Ba", "1.5"}}, query(t, c, `SELECT * FROM quotes LIMIT 2`))
	exec(t, c, `CREATE TABLE trades (ts BIGINT, sym TEXT) ORDER BY (ts)`)
	exec(t, c, `INSERT INTO trades VALUES (500000, 'Aa'), (3, 'Ba')`)
	require.Equal(t, [][]string{{"3", "Ba", "2"}, {"500000", "Aa", "499901"}},
		query(t, c, `SELECT t.ts, t.sym, q.ts FROM trades t ASOF LEFT JOIN quotes q ON t.sym = q.sym AND t.ts >= q.ts ORDER BY t.ts`))
}

// TestIngestModes: create (with an ordering option), append, replace,
// fail; all or nothing; inside a transaction.
func TestIngestModes(t *testing.T) {
	e := newEnv(t, flightsql.Config{})
	c := e.client(t)
	ctx := context.Background()
	ingest := func(table string, rows int, opts *afsql.ExecuteIngestOpts) (int64, error) {
		rdr := quotesReader(t, rows, quotesSchema)
		defer rdr.Release()
		if opts == nil {
			opts = &afsql.ExecuteIngestOpts{}
		}
		if opts.TableDefinitionOptions == nil {
			// Both unspecified: the server's defaults.
			opts.TableDefinitionOptions = &afsql.TableDefinitionOptions{}
		}
		opts.Table = table
		return c.ExecuteIngest(ctx, rdr, opts)
	}
	create := &afsql.TableDefinitionOptions{IfNotExist: afsql.TableDefinitionOptionsTableNotExistOptionCreate,
		IfExists: afsql.TableDefinitionOptionsTableExistsOptionFail}

	_, err := ingest("q", 10, nil)
	requireState(t, err, "42P01") // unspecified if_not_exist: fail
	n, err := ingest("q", 10, &afsql.ExecuteIngestOpts{TableDefinitionOptions: create, Options: map[string]string{flightsql.OptionOrderBy: "ts"}})
	require.NoError(t, err)
	require.EqualValues(t, 10, n)
	require.Equal(t, [][]string{{"ts", "bigint", "NO"}, {"sym", "text", "YES"}, {"bid", "real", "YES"}},
		query(t, c, `SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'q' ORDER BY ordinal_position`))
	require.Equal(t, [][]string{{"1"}}, query(t, c, `SELECT ts FROM q LIMIT 1`), "created ordered by ts")
	_, err = ingest("q", 10, &afsql.ExecuteIngestOpts{TableDefinitionOptions: create})
	requireState(t, err, "42P07")
	n, err = ingest("q", 5, nil) // unspecified if_exists: append
	require.NoError(t, err)
	require.EqualValues(t, 5, n)
	require.Equal(t, [][]string{{"15"}}, query(t, c, `SELECT count(*) FROM q`))
	n, err = ingest("q", 3, &afsql.ExecuteIngestOpts{TableDefinitionOptions: &afsql.TableDefinitionOptions{
		IfExists: afsql.TableDefinitionOptionsTableExistsOptionReplace}})
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	require.Equal(t, [][]string{{"3"}}, query(t, c, `SELECT count(*) FROM q`))

	_, err = ingest("q", 3, &afsql.ExecuteIngestOpts{Options: map[string]string{"compression": "zstd"}})
	requireState(t, err, "22023")
	_, err = ingest("q", 3, &afsql.ExecuteIngestOpts{Temporary: true})
	requireState(t, err, "0A000")
	other := "other"
	_, err = ingest("q", 3, &afsql.ExecuteIngestOpts{Schema: &other})
	requireState(t, err, "3F000")

	// All or nothing: a NULL in the last batch (a NOT NULL column) loads
	// nothing of the earlier batches.
	exec(t, c, `CREATE TABLE strict (ts BIGINT NOT NULL, v TEXT NOT NULL)`)
	schema := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b1 := params(t, e, schema, `[{"ts": 1, "v": "a"}, {"ts": 2, "v": "b"}]`)
	b2 := params(t, e, schema, `[{"ts": 3, "v": null}]`)
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{b1, b2})
	require.NoError(t, err)
	b1.Release()
	b2.Release()
	_, err = c.ExecuteIngest(ctx, rdr, &afsql.ExecuteIngestOpts{Table: "strict", TableDefinitionOptions: appendOnly})
	rdr.Release()
	requireState(t, err, "23502")
	require.Equal(t, [][]string{{"0"}}, query(t, c, `SELECT count(*) FROM strict`))
	// A field the table lacks.
	rdr = quotesReader(t, 1, quotesSchema)
	_, err = c.ExecuteIngest(ctx, rdr, &afsql.ExecuteIngestOpts{Table: "strict", TableDefinitionOptions: appendOnly})
	rdr.Release()
	requireState(t, err, "42703")

	// In a transaction: visible at commit.
	tx, err := c.BeginTransaction(ctx)
	require.NoError(t, err)
	rdr = quotesReader(t, 7, quotesSchema)
	n, err = c.ExecuteIngest(ctx, rdr, &afsql.ExecuteIngestOpts{Table: "q", TransactionId: tx.ID(), TableDefinitionOptions: appendOnly})
	rdr.Release()
	require.NoError(t, err)
	require.EqualValues(t, 7, n)
	require.Equal(t, [][]string{{"3"}}, query(t, c, `SELECT count(*) FROM q`))
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, [][]string{{"10"}}, query(t, c, `SELECT count(*) FROM q`))
}
