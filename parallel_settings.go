package asofsql

import (
	"math"
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// The planner's judgement of parallelism (issue 15, par-default;
// sql/planner/parallel_degree.go): max_parallel_workers_per_gather is the
// most workers a gather may use, and min_parallel_table_scan_size the
// input size below which it stays serial, as in PostgreSQL.

// defaultMinParallel is min_parallel_table_scan_size's default:
// PostgreSQL's 8MB.
const defaultMinParallel = 8 << 20

// blockBytes is the unit of min_parallel_table_scan_size without a unit:
// PostgreSQL's 8kB block.
const blockBytes = 8192

// maxMinParallelBlocks is PostgreSQL's upper bound for
// min_parallel_table_scan_size, in blocks (INT_MAX / 3).
const maxMinParallelBlocks = math.MaxInt32 / 3

// parseBlocks reads a min_parallel_table_scan_size value as PostgreSQL
// does: a number of 8kB blocks, or a number with a memory unit (B, kB, MB,
// GB, TB), rounded to whole blocks. It returns bytes.
func parseBlocks(name, v string) (int64, error) {
	bad := func() error {
		return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", name, v).
			WithHint("Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".")
	}
	t := strings.TrimSpace(v)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, bad()
	}
	blocks := num
	if unit := strings.TrimSpace(t[i:]); unit != "" {
		found := false
		for _, u := range memoryUnits {
			if u.name == unit {
				blocks, found = math.RoundToEven(num*float64(u.n)/blockBytes), true
				break
			}
		}
		if !found {
			return 0, bad()
		}
	} else {
		blocks = math.RoundToEven(num)
	}
	if blocks > maxMinParallelBlocks {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "%.0f 8kB is outside the valid range for parameter \"%s\" (0 .. %d)",
			blocks, name, maxMinParallelBlocks)
	}
	return int64(blocks) * blockBytes, nil
}

// WithMinParallelTableScanSize sets the database's default
// min_parallel_table_scan_size in bytes (8MB when not given; 0 gives every
// parallel plan the full max_parallel_workers_per_gather, as the logic
// tests' parallel runs use). SET changes it for a session and RESET
// returns to it.
func WithMinParallelTableScanSize(bytes int64) Option {
	return func(o *options) { o.minParallel = &bytes }
}

// minParallel is the database's default min_parallel_table_scan_size.
func (db *DB) minParallel() int64 {
	if db.opts.minParallel != nil {
		return *db.opts.minParallel
	}
	return defaultMinParallel
}

// parallelHolds reports whether the degrees a kept plan p chose from its
// tables' sizes still hold for s on r (plancache.go).
func parallelHolds(p planner.Plan, s *Session, workers int, minParallel int64, r relations) bool {
	q, ok := p.(*planner.Query)
	if !ok {
		return true
	}
	if workers != s.workers || minParallel != s.minParallel {
		return false
	}
	if len(q.Sizes) == 0 {
		return true
	}
	return q.SizesHold(func(temp bool, name string) *catalog.TableInfo {
		rel, _ := r.find(temp, name)
		return rel.Table
	}, s.minParallel, s.workers)
}
