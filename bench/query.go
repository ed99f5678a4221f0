package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

// The SQL operator shapes (issue 6) all run on one table t of Left rows
// (10M = 10<<20 at full size), generated once and loaded into both
// engines:
//
//	k BIGINT   the row number 0..n-1, in order
//	a BIGINT   a random permutation of 0..n-1 (unique: every sort on it
//	           has one right answer, and a > x selects exactly n-1-x rows)
//	b BIGINT   uniform over [0, 1000)
//	g BIGINT   uniform over [0, 1000)        (1,000 groups)
//	h BIGINT   uniform over [0, 1,000,000)   (~1M groups at full size)
//	s TEXT     16 characters, 'SYM' and 13 digits, uniform over 10,000 values
const (
	tableB     = 1000
	tableG     = 1000
	tableH     = 1000000
	tableS     = 10000
	tableSeed  = 11
	textPrefix = "SYM"
)

// ColKind is how the answer check reads one result column.
type ColKind int

const (
	// IntCol is an integer (int64, or an integral NUMERIC such as sum).
	IntCol ColKind = iota
	// TextCol is one of t.s's values; the checksum uses its number.
	TextCol
	// AvgCol is an average (NUMERIC or DOUBLE); it is not in the checksum
	// but must equal the row's sum / count (QuerySpec.Avg).
	AvgCol
)

// OutCol is one result column.
type OutCol struct {
	Name string
	Kind ColKind
}

// OrderKey is a column the result must be sorted on.
type OrderKey struct {
	Col  int
	Desc bool
}

// AvgCheck names the result columns of an average and its sum and count.
type AvgCheck struct{ Avg, Sum, Count int }

// QuerySpec is a SQL operator shape: one query over table t and how its
// answer is checked. Both engines run the same SQL text.
//
// The check (QuerySummarizer in Go, QuerySummarySQL in DuckDB) is the row
// count and the checksum Σ over rows, over the columns j that are not
// averages, of (x_j + 1) · (id mod 1000003 + 1) · (j + 1) in 128-bit
// integers, where x_j is the column's value (a text key's number) and id
// the value of column ID (the row number k, or the group key). It does not
// depend on row order, ties every value to its row's identity and column,
// and is exact. On top, every result must hold Order (no row after a
// greater one; for a sort with a unique key that, with the checksum, pins
// the whole answer) and every average must equal sum / count within 1e-9
// relative; a violation is an error, not a disagreement.
type QuerySpec struct {
	SQL   func(rows int64) string
	Cols  []OutCol
	ID    int
	Order []OrderKey
	Avg   *AvgCheck
}

func aggSpec(key string, kind ColKind) *QuerySpec {
	return &QuerySpec{
		SQL: func(int64) string {
			return fmt.Sprintf("SELECT %[1]s, count(*) AS n, sum(b) AS sb, avg(b) AS ab, min(a) AS mi, max(a) AS ma FROM t GROUP BY %[1]s", key)
		},
		Cols: []OutCol{{key, kind}, {"n", IntCol}, {"sb", IntCol}, {"ab", AvgCol}, {"mi", IntCol}, {"ma", IntCol}},
		ID:   0,
		Avg:  &AvgCheck{Avg: 3, Sum: 2, Count: 1},
	}
}

func filterSpec(keepPercent int64) *QuerySpec {
	return &QuerySpec{
		SQL: func(n int64) string {
			return fmt.Sprintf("SELECT k, a * b + 1 AS v FROM t WHERE a > %d", n-n*keepPercent/100-1)
		},
		Cols: []OutCol{{"k", IntCol}, {"v", IntCol}},
	}
}

// QueryShapes are issue 6's filter+project, sort, top-N and aggregate
// shapes on 10M rows.
var QueryShapes = []Shape{
	{Name: "F1", Desc: "filter+project, 10% of rows kept", Left: 10 << 20, Query: filterSpec(10)},
	{Name: "F2", Desc: "filter+project, 50% of rows kept", Left: 10 << 20, Query: filterSpec(50)},
	{Name: "O1", Desc: "sort by one int64 key (3 columns)", Left: 10 << 20, Query: &QuerySpec{
		SQL:   func(int64) string { return "SELECT k, a, b FROM t ORDER BY a" },
		Cols:  []OutCol{{"k", IntCol}, {"a", IntCol}, {"b", IntCol}},
		Order: []OrderKey{{Col: 1}},
	}},
	{Name: "O2", Desc: "sort by (16-char text, int64) (3 columns)", Left: 10 << 20, Query: &QuerySpec{
		SQL:   func(int64) string { return "SELECT s, a, k FROM t ORDER BY s, a" },
		Cols:  []OutCol{{"s", TextCol}, {"a", IntCol}, {"k", IntCol}},
		ID:    2,
		Order: []OrderKey{{Col: 0}, {Col: 1}},
	}},
	{Name: "T1", Desc: "top-N: ORDER BY a DESC LIMIT 100", Left: 10 << 20, Query: &QuerySpec{
		SQL:   func(int64) string { return "SELECT k, a FROM t ORDER BY a DESC LIMIT 100" },
		Cols:  []OutCol{{"k", IntCol}, {"a", IntCol}},
		Order: []OrderKey{{Col: 1, Desc: true}},
	}},
	{Name: "G1", Desc: "GROUP BY 1,000 int64 groups, count/sum/avg/min/max", Left: 10 << 20, Query: aggSpec("g", IntCol)},
	{Name: "G2", Desc: "GROUP BY ~1M int64 groups, count/sum/avg/min/max", Left: 10 << 20, Query: aggSpec("h", IntCol)},
	{Name: "G3", Desc: "GROUP BY 10,000 16-char text groups, count/sum/avg/min/max", Left: 10 << 20, Query: aggSpec("s", TextCol)},
	{Name: "P1", Desc: "GROUP BY 1,000 int64 groups, percentile_disc(0.5) and (0.9) WITHIN GROUP", Left: 10 << 20, Query: &QuerySpec{
		SQL: func(int64) string {
			return "SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY b) AS p50, percentile_disc(0.9) WITHIN GROUP (ORDER BY a) AS p90 FROM t GROUP BY g"
		},
		Cols: []OutCol{{"g", IntCol}, {"p50", IntCol}, {"p90", IntCol}},
	}},
	{Name: "W1", Desc: "moving sum over the 301 rows up to each: sum(b) OVER (ORDER BY k RANGE BETWEEN 300 PRECEDING AND CURRENT ROW)", Left: 10 << 20, Query: &QuerySpec{
		SQL: func(int64) string {
			return "SELECT k, sum(b) OVER (ORDER BY k RANGE BETWEEN 300 PRECEDING AND CURRENT ROW) AS s FROM t"
		},
		Cols: []OutCol{{"k", IntCol}, {"s", IntCol}},
	}},
}

// textKey is t.s's value number i.
func textKey(i int) string { return fmt.Sprintf("%s%013d", textPrefix, i) }

// GenerateTable builds table t with rows rows (see QueryShapes),
// deterministically, in batches of batchRows.
func GenerateTable(rows int64, mem memory.Allocator) Input {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.PrimitiveTypes.Int64},
		{Name: "g", Type: arrow.PrimitiveTypes.Int64},
		{Name: "h", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	names := make([]string, tableS)
	for i := range names {
		names[i] = textKey(i)
	}
	rng := rand.New(rand.NewPCG(tableSeed, tableSeed))
	perm := rng.Perm(int(rows))
	in := Input{Name: "t", Schema: schema, Rows: rows}
	ib := make([]*array.Int64Builder, 5)
	for i := range ib {
		ib[i] = array.NewInt64Builder(mem)
		defer ib[i].Release()
	}
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	for done := int64(0); done < rows; {
		n := int(min(batchRows, rows-done))
		for _, b := range ib {
			b.Reserve(n)
		}
		sb.Reserve(n)
		sb.ReserveData(n * 16)
		for i := 0; i < n; i++ {
			r := done + int64(i)
			ib[0].UnsafeAppend(r)
			ib[1].UnsafeAppend(int64(perm[r]))
			ib[2].UnsafeAppend(int64(rng.IntN(tableB)))
			ib[3].UnsafeAppend(int64(rng.IntN(tableG)))
			ib[4].UnsafeAppend(int64(rng.IntN(tableH)))
			sb.Append(names[rng.IntN(tableS)])
		}
		done += int64(n)
		cols := make([]arrow.Array, 0, 6)
		for _, b := range ib {
			cols = append(cols, b.NewArray())
		}
		cols = append(cols, sb.NewArray())
		in.Batches = append(in.Batches, array.NewRecordBatch(schema, cols, int64(n)))
		for _, c := range cols {
			c.Release()
		}
	}
	return in
}

// QuerySummarizer checks a query's result batches in arrival order (see
// QuerySpec) and accumulates its Summary.
type QuerySummarizer struct {
	spec *QuerySpec
	rows int64
	sum  Sum128
	prev []any
	vals []any
}

// NewQuerySummarizer prepares a check of spec's result.
func NewQuerySummarizer(spec *QuerySpec) *QuerySummarizer {
	return &QuerySummarizer{spec: spec, vals: make([]any, len(spec.Cols))}
}

// Add folds one result batch in; it fails on a wrong column type, a value
// outside the check's domain, an order violation or a wrong average.
func (z *QuerySummarizer) Add(b arrow.RecordBatch) error {
	spec := z.spec
	if int(b.NumCols()) != len(spec.Cols) {
		return sqlerr.New(sqlerr.InternalError, "result batch has %d columns, want %d", b.NumCols(), len(spec.Cols))
	}
	for i := 0; i < int(b.NumRows()); i++ {
		for j, c := range spec.Cols {
			v, err := cellValue(b.Column(j), i, c)
			if err != nil {
				return fmt.Errorf("result row %d, column %s: %w", z.rows, c.Name, err)
			}
			z.vals[j] = v
		}
		if err := z.addRow(z.vals); err != nil {
			return err
		}
	}
	return nil
}

// addRow checks and sums one row, as cellValue reads it: int64 for an
// IntCol, textValue for a TextCol, float64 for an AvgCol.
func (z *QuerySummarizer) addRow(vals []any) error {
	spec := z.spec
	idm := uint64(numberOf(vals[spec.ID])%checksumMod) + 1
	for j, c := range spec.Cols {
		if c.Kind == AvgCol {
			continue
		}
		x := numberOf(vals[j])
		if x < 0 {
			return sqlerr.New(sqlerr.DataException, "result row %d: column %s is %d, outside the check's domain (>= 0)", z.rows, c.Name, x)
		}
		z.sum.addProduct(uint64(x)+1, idm*uint64(j+1))
	}
	if a := spec.Avg; a != nil {
		avg := vals[a.Avg].(float64)
		want := float64(numberOf(vals[a.Sum])) / float64(numberOf(vals[a.Count]))
		if !(math.Abs(avg-want) <= 1e-9*max(1, math.Abs(avg))) {
			return sqlerr.New(sqlerr.DataException, "result row %d: %s = %v, but %s / %s = %v", z.rows,
				spec.Cols[a.Avg].Name, avg, spec.Cols[a.Sum].Name, spec.Cols[a.Count].Name, want)
		}
	}
	if len(spec.Order) > 0 {
		if z.prev != nil && outOfOrder(spec.Order, z.prev, vals) {
			return sqlerr.New(sqlerr.DataException, "result row %d is out of order: %v after %v", z.rows, vals, z.prev)
		}
		if z.prev == nil {
			z.prev = make([]any, len(vals))
		}
		copy(z.prev, vals)
	}
	z.rows++
	return nil
}

// textValue keeps a text key's string (for ordering) and its number.
type textValue struct {
	s string
	n int64
}

func numberOf(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case textValue:
		return v.n
	}
	return 0
}

// outOfOrder reports whether cur must not follow prev under keys.
func outOfOrder(keys []OrderKey, prev, cur []any) bool {
	for _, k := range keys {
		c := compareValues(prev[k.Col], cur[k.Col])
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c > 0
		}
	}
	return false
}

func compareValues(a, b any) int {
	switch a := a.(type) {
	case int64:
		b := b.(int64)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case textValue:
		return strings.Compare(a.s, b.(textValue).s)
	}
	return 0
}

// cellValue reads row i of a result column as the check needs it.
func cellValue(col arrow.Array, i int, c OutCol) (any, error) {
	if col.IsNull(i) {
		return nil, sqlerr.New(sqlerr.DataException, "NULL where the shape has none")
	}
	switch c.Kind {
	case TextCol:
		s, ok := col.(*array.String)
		if !ok {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "type %s, want utf8", col.DataType())
		}
		n, err := textNumber(s.Value(i))
		return textValue{s: s.Value(i), n: n}, err
	case AvgCol:
		switch a := col.(type) {
		case *array.Float64:
			return a.Value(i), nil
		case *array.Decimal128:
			return a.Value(i).ToFloat64(a.DataType().(*arrow.Decimal128Type).Scale), nil
		}
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "type %s, want float64 or decimal", col.DataType())
	}
	switch a := col.(type) {
	case *array.Int64:
		return a.Value(i), nil
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		q, r := a.Value(i).Div(decimal128.GetScaleMultiplier(int(scale)))
		if r != (decimal128.Num{}) || q.HighBits() != 0 || q.LowBits() > math.MaxInt64 {
			return nil, sqlerr.New(sqlerr.DataException, "%s is not an integer in [0, 2^63)", a.ValueStr(i))
		}
		return int64(q.LowBits()), nil
	}
	return nil, sqlerr.New(sqlerr.DatatypeMismatch, "type %s, want int64 or decimal", col.DataType())
}

// textNumber is the number of a text key ('SYM' and 13 digits).
func textNumber(s string) (int64, error) {
	digits, ok := strings.CutPrefix(s, textPrefix)
	n, err := strconv.ParseInt(digits, 10, 64)
	if !ok || len(s) != 16 || err != nil || n < 0 {
		return 0, sqlerr.New(sqlerr.DataException, "text key %q is not one of the generator's", s)
	}
	return n, nil
}

// Summary returns the row count and checksum.
func (z *QuerySummarizer) Summary() Summary {
	return Summary{Rows: z.rows, Sums: []Sum128{z.sum}}
}

// duckValue is DuckDB's spelling of a column's number in the checksum.
func duckValue(c OutCol) string {
	if c.Kind == TextCol {
		return fmt.Sprintf("CAST(substr(%s, %d) AS HUGEINT)", c.Name, len(textPrefix)+1)
	}
	return fmt.Sprintf("CAST(%s AS HUGEINT)", c.Name)
}

// QuerySummarySQL computes, over DuckDB's result table, the row count, the
// checksum (as text) and the number of rows whose average is wrong: the
// same formulas as QuerySummarizer.
func QuerySummarySQL(table string, spec *QuerySpec) string {
	idm := fmt.Sprintf("(%s %% %d + 1)", duckValue(spec.Cols[spec.ID]), checksumMod)
	var terms []string
	for j, c := range spec.Cols {
		if c.Kind != AvgCol {
			terms = append(terms, fmt.Sprintf("(%s + 1) * %s * %d", duckValue(c), idm, j+1))
		}
	}
	avgBad := "0"
	if a := spec.Avg; a != nil {
		avgBad = fmt.Sprintf("count(*) FILTER (WHERE NOT (abs(%[1]s - CAST(%[2]s AS DOUBLE) / %[3]s) <= 1e-9 * greatest(1, abs(%[1]s))))",
			spec.Cols[a.Avg].Name, spec.Cols[a.Sum].Name, spec.Cols[a.Count].Name)
	}
	return fmt.Sprintf("SELECT count(*), CAST(COALESCE(sum(%s), 0) AS VARCHAR), %s FROM %s",
		strings.Join(terms, " + "), avgBad, table)
}

// QueryOrderSQL counts the rows of DuckDB's result table (in its stored
// order, rowid) that come after a row they should precede; "" when the
// shape has no order.
func QueryOrderSQL(table string, spec *QuerySpec) string {
	if len(spec.Order) == 0 {
		return ""
	}
	var sel []string
	var cond string
	for i := len(spec.Order) - 1; i >= 0; i-- {
		k := spec.Order[i]
		c := spec.Cols[k.Col].Name
		sel = append(sel, c, fmt.Sprintf("lag(%[1]s) OVER (ORDER BY rowid) AS p_%[1]s", c))
		op := ">"
		if k.Desc {
			op = "<"
		}
		bad := fmt.Sprintf("p_%[1]s %[2]s %[1]s", c, op)
		if cond == "" {
			cond = bad
		} else {
			cond = fmt.Sprintf("%s OR (p_%[2]s = %[2]s AND (%[3]s))", bad, c, cond)
		}
	}
	return fmt.Sprintf("SELECT count(*) FROM (SELECT %s FROM %s) WHERE %s", strings.Join(sel, ", "), table, cond)
}
