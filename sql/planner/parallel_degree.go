package planner

import (
	"fmt"
	"strconv"

	"github.com/asofsql/asofsql/catalog"
)

// The planner's judgement of parallelism (issue 15, par-default):
// Options.Workers (max_parallel_workers_per_gather) is the most workers a
// gather may use; each gather (a Merge, FinalAggregate, GatherMerge,
// ParallelHashJoin or ParallelWindow) gets the degree its input's size
// pays for, as PostgreSQL's compute_parallel_worker decides a parallel
// scan's workers from the relation's size:
//
//   - The input's size is that of the largest table the gather's
//     workers scan: the table's stored bytes (catalog.TableInfo.Bytes,
//     pg_table_size), or the part of them a Scan's Range keeps, which the
//     planner estimates with PostgreSQL's selectivities for conditions it
//     has no statistics for (0.005 for a point, 1/3 for each inequality,
//     estimate.go). A hash join's is its probe (left) side's, the side
//     the workers split; its build side is built once.
//   - Below Options.MinParallelBytes (min_parallel_table_scan_size, 8MB
//     by default) the gather stays serial and says why in EXPLAIN. From
//     it on, 2 workers (PostgreSQL's one worker and its leader), and one
//     more each time the size triples (24MB: 3, 72MB: 4, ...), at most
//     Options.Workers.
//   - MinParallelBytes 0 turns the judgement off: every gather gets
//     Options.Workers (PostgreSQL's regression tests set
//     min_parallel_table_scan_size = 0 to force parallel plans; the logic
//     tests do the same at 4 workers).
//
// A kept plan (the plan cache) is good while every scan that chose a
// degree would still choose the same one: Query.Sizes records them.

// ScanSize is one Scan whose size chose a gather's degree: the table it
// read (as planned), the fraction of the table's bytes the Scan is taken
// to read, and the degree that size alone gives.
type ScanSize struct {
	Table    *catalog.TableInfo
	Fraction float64
	Degree   int
}

// degrees decides the degree of each gather parallelize builds.
type degrees struct {
	max   int   // Options.Workers
	min   int64 // Options.MinParallelBytes
	sizes []ScanSize
}

// of returns the degree for a gather whose workers scan the tables below
// in, or 1 and why the gather stays serial.
func (d *degrees) of(in Node) (int, string) {
	if d.min <= 0 {
		return d.max, ""
	}
	big := d.largest(in)
	if n := parallelDegree(big, d.min, d.max); n > 1 {
		return n, ""
	}
	return 1, fmt.Sprintf("input %s, below min_parallel_table_scan_size %s", sizeText(big), sizeText(d.min))
}

// largest returns the bytes of the largest Scan below n (0 when there is
// none: rows made by VALUES or a function are few), recording each in
// d.sizes.
func (d *degrees) largest(n Node) int64 {
	var big int64
	if s, ok := n.(*Scan); ok {
		f := scanFraction(s)
		b := int64(float64(s.Table.Bytes) * f)
		d.sizes = append(d.sizes, ScanSize{Table: s.Table, Fraction: f, Degree: parallelDegree(b, d.min, d.max)})
		return b
	}
	for _, c := range n.Children() {
		big = max(big, d.largest(c))
	}
	return big
}

// parallelDegree is the degree of a gather whose largest input is bytes
// (see above): 1 below min, 2 from min, one more for each tripling, at
// most max; max when min is 0.
func parallelDegree(bytes, min int64, max int) int {
	if max < 2 {
		return 1
	}
	if min <= 0 {
		return max
	}
	if bytes < min {
		return 1
	}
	n := 2
	for t := min; n < max && bytes/3 >= t; t *= 3 {
		n++
	}
	return n
}

// scanFraction is the part of its table's bytes s is taken to read: all
// of them, or what its Range keeps by PostgreSQL's default selectivities
// (the range's Filter stays above the Scan and is estimated so too).
func scanFraction(s *Scan) float64 {
	f := 1.0
	if r := s.Range; r != nil {
		switch {
		case r.Lo != nil && r.Hi != nil && !r.LoExclusive && !r.HiExclusive && cmpValue(r.Lo, r.Hi) == 0:
			f = defaultEqSel
		default:
			if r.Lo != nil {
				f *= defaultIneqSel
			}
			if r.Hi != nil {
				f *= defaultIneqSel
			}
		}
	}
	if rr := s.Rows; rr != nil && s.Table.Rows > 0 {
		end := rr.End
		if end < 0 || end > s.Table.Rows {
			end = s.Table.Rows
		}
		f *= float64(max(0, end-rr.Start)) / float64(s.Table.Rows)
	}
	return f
}

// SizesHold reports whether the degrees q's gathers were planned at still
// hold: every Scan that chose one gives the same degree at the size its
// table has now. table returns a table's definition now (nil if it is
// gone); the settings (Workers, MinParallelBytes) are the caller's to
// compare. A plan without parallel judgement holds at once.
func (q *Query) SizesHold(table func(temp bool, name string) *catalog.TableInfo, min int64, workers int) bool {
	for _, s := range q.Sizes {
		t := table(s.Table.Temp, s.Table.Name)
		if t == nil || parallelDegree(int64(float64(t.Bytes)*s.Fraction), min, workers) != s.Degree {
			return false
		}
	}
	return true
}

// sizeText prints a byte count for EXPLAIN: the largest unit (kB, MB, GB,
// TB, powers of 1024 as PostgreSQL's) it reaches, to one decimal.
func sizeText(n int64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10) + units[u]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[u]
}

// PartitionDegree is the number of parts (Partition's n) the judgement
// gives a result driven by root's driving table: the degree a gather
// scanning that table alone gets (1 below minBytes; workers with minBytes
// 0, or when root has no driving table, where Partition gives one part).
func PartitionDegree(root Node, workers int, minBytes int64) int {
	s := drivingScan(root)
	if s == nil {
		return workers
	}
	return parallelDegree(int64(float64(s.Table.Bytes)*scanFraction(s)), minBytes, workers)
}
