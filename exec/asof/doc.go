// Package asof is asofsql's ASOF join operator: a streaming, vectorized
// merge of one left input with N >= 1 right inputs, each ordered by its on
// column t.
//
// The operator needs nothing of the SQL layer: it is built from Arrow
// inputs (exec/operator's contract) and plain Go options, and depends on
// exec/operator and sqlerr alone (TestDependencies pins that).
//
// # Contract (the user-facing semantics: docs/sql.md, "ASOF JOIN")
//
// For each left row and each right input, with Δ = right.t − left.t computed
// exactly, a right row is eligible when its by-keys equal the left row's
// (SQL '=': NULL equals nothing), its t is not NULL, and Lo <= Δ <= Hi
// (inclusive; an Unbounded side is open). The winner is the eligible row
// with the smallest |Δ|; at equal distance on opposite sides the Tie rule
// decides (PreferEarlier takes Δ < 0); among rows with the same t the last
// one in input order wins when Δ <= 0, the first one when Δ > 0. INNER drops
// left rows without a winner, LEFT keeps them with NULL right columns; SEMI
// keeps only the left rows with a winner and ANTI only those without one,
// both adding no column. RIGHT (FULL) is INNER (LEFT) plus every right row
// that is the winner of no left row, once, with the left columns NULL,
// emitted as soon as no later left row can select it (outer.go); such a
// join has one right input, ordered by t.
//
// Extra conditions on one input alone (spec §2.5, conds.go) are Conds
// evaluated per batch: a left row failing Right.LeftCond has no eligible
// rows in that input, a right row failing Right.Cond (RIGHT and FULL; the
// other kinds get a filtered input) is eligible for nobody and comes out
// unmatched. Both work by giving the failing row a NULL key. A condition
// on both inputs (Right.PairCond, pairs.go) makes eligibility per pair:
// the join keeps each key's right rows that a later left row may still
// select (its whole history when the lower side is unbounded, charged to
// the query's memory account) and walks each left row's candidates from
// the closest outward, evaluating the condition over batches of pairs,
// until one passes.
//
//	left (t, k)    right (t, k, bid)     Lo = -10, Hi = 0 (backward, tolerance 10)
//	 10  a           3  a  1.0           10 a -> t 9,  bid 2.5 (two rows at 9: the last)
//	 25  a           9  a  2.0           25 a -> NULL          (9 is 16 back)
//	 30  b           9  a  2.5           30 b -> t 30, bid 4.0 (exact match)
//	                30  b  4.0
//
// Output: the left columns (the input's own arrays, never copied, for LEFT),
// then each right input's Payload columns (nullable), one output batch per
// left batch; INNER filters within the batch. Put the on column in Payload
// to see the matched right t.
//
// # Types
//
// On columns: int8–int64, uint8–uint64, date32/64, time32/64, timestamps
// of every unit (with or without zone), float32/64 (eligibility and
// distance in float64, NaN is NULL, -0 = 0) and decimal128 (any value;
// distances exact in 128 bits). Left and right share a class and unit
// (integer widths may differ), or compare by value as PostgreSQL does:
// an integer or decimal against a float as float64, an integer against a
// decimal, or decimals of two scales, as a decimal of the larger scale
// (convert.go appends the converted on column to that side's batches;
// the output keeps the original columns). Lo and Hi are in
// the column's physical unit (the common type's when the sides differ):
// days, the timestamp's unit, unscaled decimal units (Dec when beyond
// int64); Float for float columns, where an edge that is NaN (an infinite
// t with an infinite bound of the other sign) leaves the row no eligible
// rows. Right.Empty is a range that matches nothing (a NUMERIC range that
// rounding to the scale crossed). Offsets never
// overflow: windows are computed on a uint64 number line (numberline.go),
// or for decimals on a 128-bit one (decimal.go), with explicit
// under/overflow.
// A decimal whose types (left and right) have precision <= 18 and whose
// bounds fit in int64 unscaled units runs on the number line instead,
// decided when the join is built and giving the same answers; a value
// beyond int64 units in such a column is a 22003 error.
//
// Strings and large strings, binaries (large, fixed-size) and booleans are
// on columns too, compared bytewise (C collation, as the catalog and
// exec.Sort order them; false < true), but only with Lo and Hi each 0 or
// Unbounded and at least one bounded: the compatibility inequality forms
// (l.t >= r.t is Lo Unbounded, Hi 0; > makes Hi 0 Exclusive; <= and < the
// mirror images) and the exact match. The winner is the closest in order.
// These and wider decimals run on the comparison kernel (comparison.go)
// with the same rules, memory bound and order checks as the number line's.
//
// # Structure
//
// Each right input is one kernel over one right-input core (core.go): the
// core reads the input lazily, keeps the retained batches (slots, with
// reference counts), the per-key latest rows and the queue of rows read
// ahead, the key-major group cursors (keymajor.go), compaction, and builds
// the payload output of each left batch (output.go). It is generic over
// t's Go type only to store t values; the typed step (a left row's window,
// advancing to its edge, the first row after it, the nearer of two rows)
// belongs to the kernel: lineRight (general.go, backward.go) written for
// uint64 in its hot loops, ordRight (comparison.go) over an ordOps.
//
// By-keys: any number of integer, float, bool, (large) string, (large)
// binary, fixed-size binary, decimal128, date and timestamp columns. Keys
// are interned into dense ids in an open-addressing table whose hits are
// always confirmed by comparing the full encoded key. A key marked
// NullSafe (IS NOT DISTINCT FROM) encodes NULL as a value of its own.
// Keys of different numeric classes compare as PostgreSQL compares them:
// each side's encoding converts (an integer to float64 against a float, to
// the decimal's scale against a decimal; a decimal to float64 against a
// float). Right inputs that
// match on the same left key columns share one table: each left batch's
// keys are encoded and looked up once, and every such input keeps its
// per-key state in arrays indexed by id.
//
// # Memory, order and concurrency
//
// A right input is read lazily, only as far as the current left row's window
// needs. Per key the kernel keeps the latest row at or before the left t and
// a queue of rows read ahead (the window), and a copy of the latest row's
// payload values of 1 to 8 bytes (so a backward winner is written without
// touching its batch); right batches are retained only
// while such a row points into them (only their payload columns), and
// released once nothing does. Forward-unbounded joins (Hi Unbounded) must
// read until each key's next row, so they buffer what lies in between.
//
// The commonest shape, a range with Hi <= 0 whose payload columns are all
// fixed-width of at most 8 bytes, runs on the backward kernel
// (backward.go): every winner is its key's latest row, so the kernel keeps
// per key one record (t and payload values) and no reference to any right
// row, and releases each right batch as soon as its cursor leaves it.
// TestBackwardKernel checks its output against the general path's, byte
// for byte.
//
// Key-major inputs (Right.KeyMajor): the left input and a right input may
// instead both be ordered by (keys..., t), keys ascending with NULLs last
// and strings bytewise, t ascending within each key. The join
// then works one key group at a time, aligning groups by order keys
// (memcomparable encodings of the key tuples); the result is the same.
//
// Every input is checked as it is read: a non-NULL t below its predecessor
// is a 22000 error naming the input, the column and the row. Rows are
// checked when the join steps past them, so the outcome never depends on
// batch boundaries.
//
// NewParallel (parallel.go) splits the join by key: every input is cut by
// the hash of the by-keys all right inputs share, one serial Join per
// partition runs on a worker goroutine of its own over inputs split on
// demand (no read-ahead goroutine, so no bounded queue can deadlock), and
// each left batch's output is reassembled in left order from the
// partitions' row indexes: the serial join's batches, byte for byte. It
// falls back to New where the join cannot be split (no shared by-key,
// key-major inputs, an on column off the number line) or for one worker.
//
// NewMorsel (morsel.go) runs the join in morsels of an ordered left input:
// each worker joins a contiguous run of left rows with a serial Join
// against only the right rows of its t range, a backward join's earlier
// rows through a per-key prime (each key's last right row before the
// range), computed as a prefix over the morsels; the morsels' outputs
// concatenate in left order with no reassembly. It is a pipeline: the
// first free worker cuts the next morsel (reading and checking both
// inputs, one cut at a time) while the others intern the right keys their morsels need, make each
// morsel's prime from the previous one's (a chain, each link made before
// its join) and join, and each morsel's output is returned as its worker
// makes it; a fixed number of morsels in flight bounds memory. It takes bounded
// ranges and backward ones on 64-bit integer, date and timestamp on
// columns, and falls back to NewParallel otherwise.
//
// With several right inputs each runs on its own goroutine, up to four
// left batches ahead (no unbounded queues: the join only reads the left
// input when its consumer asks for the next batch). Serial mode (Options.Serial, or
// GOMAXPROCS=1) runs the same code on the caller's goroutine and gives
// identical output. The context is checked per batch and by every input
// read; Close releases everything and is idempotent.
//
// # Example
//
//	j, err := asof.New(trades, []asof.Right{{
//		Name: "quotes", Input: quotes,
//		LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1},
//		Lo: asof.IntBound(-10), Hi: asof.IntBound(0),
//		Kind: asof.Left, Payload: []int{0, 2},
//	}}, asof.Options{Allocator: mem, LeftName: "trades"})
//	if err != nil { ... }
//	defer j.Close()
//	err = operator.Drain(ctx, j, func(b arrow.RecordBatch) error { ...; return nil })
package asof
