package planner

import (
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sqltypes"
	"math/big"
)

// Column is one output column of a plan node.
type Column struct {
	// Name is the column's name ("?column?" for unnamed expressions).
	Name string
	// Table is the qualifier it is addressable by (table name or alias),
	// "" for computed columns.
	Table    string
	Type     sqltypes.Type
	Nullable bool
}

// Node is a relational plan node. Nodes are plain data: lowering builds
// one operator per node, reading the fields below; nothing here runs.
type Node interface {
	// Schema is the node's output, by position.
	Schema() []Column
	// Children are the node's inputs, in a fixed per-node order.
	Children() []Node
	// Ordering is what the node's output is known to be ordered by.
	Ordering() ordering.Props
	// RequiredOrdering has one entry per child: the order the node needs
	// of it (nil: none).
	RequiredOrdering() []ordering.Lex
	// PreservesOrder has one entry per child: whether the node's output
	// keeps that child's row order.
	PreservesOrder() []bool
}

// Scan reads a table.
type Scan struct {
	Table *catalog.TableInfo
	// Alias is the name the query uses for the table (the table name when
	// no alias was given).
	Alias string
	// Columns are the table column indexes read, in output order.
	Columns []int
	// Range restricts an ordered table's first ordering column (segment
	// pruning, catalog.ScanOptions.Range); nil reads everything. Values
	// are the column's physical values (int64 microseconds for TIMESTAMP,
	// int32 days for DATE, ...). The Filter the range came from stays
	// above the Scan.
	Range *catalog.Range
	// Rows, when set, restricts the scan to a contiguous part of the rows
	// it would produce (partition.go); nil reads them all.
	Rows      *RowRange
	rangeType sqltypes.Type
	cols      []Column
}

// Filter keeps rows where Cond is true.
type Filter struct {
	Input Node
	Cond  expr.Expr
}

// Project computes Exprs over its input.
type Project struct {
	Input Node
	Exprs []expr.Expr
	Cols  []Column
}

// Bound is one end of an ASOF range on Δ = right.t − left.t, in the on
// column's physical unit: days for DATE, microseconds for TIMESTAMP(TZ),
// unscaled units for NUMERIC, the value itself for integers; Float for
// REAL/DOUBLE PRECISION on columns. A NUMERIC bound is also Dec (HasDec
// set), which holds it exactly where Int cannot (beyond int64 units). The
// bounds of TEXT, VARCHAR, BYTEA and BOOLEAN on columns (inequality forms
// only) are 0 or Unbounded.
type Bound struct {
	Unbounded bool
	Int       int64
	Float     float64
	Dec       decimal128.Num
	HasDec    bool
	// Exclusive leaves the bound's value itself out: a strict inequality
	// on a floating-point on column, where no finite step is exact.
	Exclusive bool
	// Param is set when the bound is a statement parameter ($n), Expr
	// when it is a constant expression over several literals (-10 + 1):
	// lowering evaluates either once per execution and converts the value
	// with AsofBoundValue (Int/Float are unused). Pos is the bound's
	// position in the query text, for the errors of that conversion.
	Param *expr.Param
	Expr  expr.Expr
	Pos   int
	// Cal is an INTERVAL bound with months on a DATE or TIMESTAMP(TZ) on
	// column: the edge is left.t + Cal with calendar arithmetic (spec §3);
	// Int is then a sign hint (see asof.Calendar).
	Cal *sqltypes.IntervalValue
	// exact is a NUMERIC bound as written, before rounding to the
	// column's scale (CheckAsofRange compares it).
	exact *big.Rat
}

// AsofKind is the join kind of one ASOF right input.
type AsofKind uint8

const (
	// AsofInner drops left rows without a winner.
	AsofInner AsofKind = iota
	// AsofLeft keeps them with NULL right columns.
	AsofLeft
	// AsofSemi keeps the left rows with a winner; no right column is
	// output (Payload is empty).
	AsofSemi
	// AsofAnti keeps the left rows without a winner; no right column is
	// output (Payload is empty).
	AsofAnti
	// AsofRightOuter is INNER plus, once each, every right row that is the
	// winner of no left row, with NULL left columns.
	AsofRightOuter
	// AsofFull is LEFT plus those right rows.
	AsofFull
)

func (k AsofKind) String() string {
	switch k {
	case AsofLeft:
		return "LEFT"
	case AsofSemi:
		return "SEMI"
	case AsofAnti:
		return "ANTI"
	case AsofRightOuter:
		return "RIGHT"
	case AsofFull:
		return "FULL"
	}
	return "INNER"
}

// outer reports the kinds that output unmatched right rows: their join
// has that one right input and its output no order (spec §2.6).
func (k AsofKind) outer() bool { return k == AsofRightOuter || k == AsofFull }

// leftOnly reports the kinds whose output has no right column.
func (k AsofKind) leftOnly() bool { return k == AsofSemi || k == AsofAnti }

// Prefer is an ASOF join's tie rule between equally distant rows on
// both sides (mirrors exec/asof.Tie).
type Prefer uint8

const (
	// PreferEarlier (the default) takes the row with Δ < 0.
	PreferEarlier Prefer = iota
	// PreferLater takes the row with Δ > 0.
	PreferLater
)

func (p Prefer) String() string {
	if p == PreferLater {
		return "LATER"
	}
	return "EARLIER"
}

// AsofRight is one right input of an AsofJoin (mirrors exec/asof.Right).
type AsofRight struct {
	// Name identifies the input in messages: the table name or alias.
	Name string
	// Input is the right input; right-only ON conditions are a Filter at
	// its top (spec §2.5: they filter eligible rows, not the result).
	Input Node
	// LeftOn and On index t in the left and right schemas.
	LeftOn, On int
	// LeftKeys and Keys are pairwise-equal by-key columns; NullSafe (nil
	// or one entry per key) marks keys written IS NOT DISTINCT FROM.
	LeftKeys, Keys []int
	NullSafe       []bool
	Lo, Hi         Bound
	// Empty: the range matches nothing although it is not reversed as
	// written (two strict inequalities whose edges meet, l.t > r.t AND
	// l.t < r.t + 1 on integers).
	Empty bool
	// OnType is the type the two on columns are compared in (spec §3: by
	// value across integer, float and NUMERIC), the unit of Lo and Hi; the
	// operator converts a side whose column has another type.
	OnType sqltypes.Type
	Tie    Prefer
	Kind   AsofKind
	// Payload are the right columns output after the left columns, in
	// order (every right column: projection pruning may narrow it).
	Payload []int
	// LeftCond is the extra ON conditions on the left input alone (over the
	// left schema): a left row failing it has no eligible rows here. Cond
	// is those on the right input alone for RIGHT and FULL (over the
	// right schema; the other kinds filter Input instead): a right row
	// failing it is eligible for nobody and comes out unmatched.
	LeftCond, Cond expr.Expr
	// PairCond is the extra ON conditions on both inputs (spec §2.5): a
	// right row is eligible for a left row only when it holds for the
	// pair. It reads a batch of the left columns PairLeft, then the right
	// columns PairRight (indexes into the inputs' schemas), in that order.
	// The join then has this one right input.
	PairCond            expr.Expr
	PairLeft, PairRight []int
	// KeysFirst: both inputs are ordered by (keys..., t) instead of t
	// (spec §4 allows it; the operator must merge per key).
	KeysFirst bool
	// Pos is the 1-based position of ASOF in the query text.
	Pos  int
	desc inputDesc
}

// AsofJoin is every ASOF JOIN form of spec §1, and a chain of them off
// the same left input (spec §2.7): output is the left columns, then each
// right's Payload columns, in the left input's order.
type AsofJoin struct {
	Left Node
	// LeftName names the left input in messages.
	LeftName string
	Rights   []*AsofRight
	// Serial says why the join runs on one worker although the plan's
	// degree is higher ("" when it is split, or the degree is 1).
	Serial   string
	cols     []Column
	leftDesc inputDesc
}

// Sort is an explicit ORDER BY: a stable sort by Keys.
type Sort struct {
	Input Node
	Keys  ordering.Lex
	// Serial says why the sort runs on one worker although the plan's
	// degree is higher, when the planner judged so (parallel_degree.go).
	Serial string
}

// Limit is LIMIT/OFFSET; Count nil means no limit. Both are Literals of
// type bigint or Params.
type Limit struct {
	Input         Node
	Count, Offset expr.Expr
}

// AggCall is one aggregate function call (count, sum, avg, min, max,
// bool_and, bool_or, string_agg, the stddev/variance family under the
// names the user wrote, first, last) with its Postgres result type T.
// Star is count(*); Distinct aggregates distinct argument values.
type AggCall struct {
	Func     string
	Args     []expr.Expr
	Distinct bool
	Star     bool
	// Desc: an ordered-set aggregate (percentile_cont, percentile_disc,
	// mode) whose WITHIN GROUP sorts descending. Its Args are the sorted
	// value, then the direct argument (the fraction).
	Desc bool
	T    sqltypes.Type
	// ordered: the call had ORDER BY; the binder sorts the Aggregate's
	// input by it (all such calls of one query share one ORDER BY).
	ordered bool
}

// Aggregate groups its input by GroupBy and computes Aggs; output is the
// group expressions then the aggregates. No GroupBy: exactly one row.
//
// With Sets (GROUPING SETS, ROLLUP, CUBE) it groups the input once per
// set, each set naming the GroupBy items it groups by (indexes); the
// outputs of the sets are concatenated, a group column outside the row's
// set is NULL, and an int4 column after the group columns holds the index
// of the row's set (what grouping() reads). An empty set is a grand
// total: one row even for empty input.
type Aggregate struct {
	Input   Node
	GroupBy []expr.Expr
	Sets    [][]int
	Aggs    []AggCall
	// Serial says why a parallel plan runs the Aggregate serially
	// (parallel.go); EXPLAIN shows it.
	Serial string
	cols   []Column
}

// AggOffset is the index of the first aggregate column of a's output.
func (a *Aggregate) AggOffset() int {
	if a.Sets != nil {
		return len(a.GroupBy) + 1
	}
	return len(a.GroupBy)
}

// JoinKind is the kind of an ordinary join.
type JoinKind uint8

const (
	JoinInner JoinKind = iota
	JoinLeft
	JoinCross
	JoinRight
	JoinFull
)

// leftNullable and rightNullable report whether the join pads a side
// with NULLs (the other side's unmatched rows).
func (k JoinKind) leftNullable() bool  { return k == JoinRight || k == JoinFull }
func (k JoinKind) rightNullable() bool { return k == JoinLeft || k == JoinFull }

func (k JoinKind) String() string {
	switch k {
	case JoinLeft:
		return "LEFT"
	case JoinRight:
		return "RIGHT"
	case JoinFull:
		return "FULL"
	case JoinCross:
		return "CROSS"
	}
	return "INNER"
}

// Join is an ordinary join: a hash equi-join on LeftKeys = RightKeys
// (when present) with a Residual condition over the combined row (left
// columns, then right ones); JoinCross has neither. Lowering builds the
// hash table on the right input and streams the left one, so the output
// keeps the left order.
type Join struct {
	Left, Right         Node
	Kind                JoinKind
	LeftKeys, RightKeys []int
	Residual            expr.Expr
	// Serial says why a hash join runs on one worker although the plan's
	// degree is higher (parallel.go).
	Serial string
	cols   []Column
}

// Values is a literal row set (VALUES, or a SELECT without FROM: one row
// of no columns).
type Values struct {
	Rows [][]expr.Expr
	Cols []Column
}

// UnionAll concatenates its inputs (same column count and types).
type UnionAll struct {
	Inputs []Node
	Cols   []Column
}

// SetOp is Left INTERSECT [ALL] Right or Left EXCEPT [ALL] Right (same
// column count and types; names from Left). Rows compare as in DISTINCT
// (NULLs equal); with ALL a row m times on the left and n times on the
// right comes out min(m,n) times (INTERSECT) or max(m-n,0) times
// (EXCEPT), without ALL at most once.
type SetOp struct {
	Kind        SetOpKind
	All         bool
	Left, Right Node
	Cols        []Column
}

// SetOpKind is INTERSECT or EXCEPT.
type SetOpKind uint8

const (
	Intersect SetOpKind = iota
	Except
)

func (k SetOpKind) String() string {
	if k == Except {
		return "EXCEPT"
	}
	return "INTERSECT"
}

// Distinct removes duplicate rows (SQL DISTINCT: NULLs are equal).
type Distinct struct {
	Input Node
}

// DistinctOn keeps the first row of each run of rows equal on Keys
// (SELECT DISTINCT ON; NULLs are equal). Its input must be ordered by
// Order, a sort on exactly the Keys columns, so equal keys are adjacent;
// the binder puts a Sort by the ORDER BY keys (which start with them)
// below it.
type DistinctOn struct {
	Input Node
	Keys  []int
	Order ordering.Lex
}

// RecursiveCTE is a WITH RECURSIVE query: Base's rows, then Recursive's
// run over the rows the previous step produced (the WorkTable nodes with
// the same ID inside Recursive) until a step produces none. Distinct
// (UNION without ALL) drops rows already produced. Recursive's columns
// have Base's types. It provides no ordering.
type RecursiveCTE struct {
	Name      string
	ID        int
	Base      Node
	Recursive Node
	Distinct  bool
	cols      []Column
}

// WorkTable reads the rows of the step before of the RecursiveCTE with
// its ID (its recursive reference).
type WorkTable struct {
	Name string
	ID   int
	cols []Column
}
