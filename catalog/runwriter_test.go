package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// TestLargeStatementsStayOrdered loads inputs of several shapes through
// the background writer (rows in order streamed into segments, runs out
// of order buffered and sorted) and checks the table holds exactly the
// input stably sorted by its key: equal keys keep their input order (the
// sym column numbers the input rows). It also checks rows in order are
// written without cutting extra segments.
func TestLargeStatementsStayOrdered(t *testing.T) {
	const rows, runRows = 1000, 100
	rng := rand.New(rand.NewPCG(7, 7))
	inputs := map[string]func(i int) int{
		"ascending":            func(i int) int { return i },
		"ascending with ties":  func(i int) int { return i / 7 },
		"one drop":             func(i int) int { return (i + 450) % rows / 3 },
		"drop between batches": func(i int) int { return (i + 424) % rows },
		"descending":           func(i int) int { return rows - i },
		"random":               func(i int) int { return rng.IntN(50) },
		"sawtooth":             func(i int) int { return i % 37 },
		"runs of order":        func(i int) int { return i%230 + i/230*10 },
	}
	modes(t, Options{AutoCompact: -1, RunRows: runRows, BatchRows: 16, LogRows: 10}, func(t *testing.T, open func() *Catalog) {
		for name, key := range inputs {
			t.Run(name, func(t *testing.T) {
				c := open()
				ctx := context.Background()
				def := quotesDef
				def.Name = "q_" + strings.ReplaceAll(name, " ", "_")
				createTable(t, c, def)
				var in strings.Builder
				type row struct{ key, seq int }
				var want []row
				for i := range rows {
					k := key(i)
					fmt.Fprintf(&in, "2024-01-01 %02d:%02d:%02d,s%04d,%d\n", k/3600, k/60%60, k%60, i, k)
					want = append(want, row{k, i})
				}
				slices.SortStableFunc(want, func(a, b row) int { return a.key - b.key })
				tx := c.Begin()
				n, err := tx.CopyFrom(ctx, def.Name, strings.NewReader(in.String()), CopyOptions{Format: "csv"})
				require.NoError(t, err)
				require.NoError(t, tx.Commit(ctx))
				require.Equal(t, int64(rows), n)
				c = open()
				got := scanRows(t, c, def.Name, ScanOptions{Columns: []int{1}})
				require.Len(t, got, rows)
				for i, w := range want {
					require.Equal(t, fmt.Sprintf("s%04d", w.seq), got[i][0], "row %d", i)
				}
				if name == "ascending" || name == "ascending with ties" {
					info, err := c.Table(def.Name)
					require.NoError(t, err)
					// Runs end at the first batch boundary at or past
					// runRows rows: 7 rows of 16.
					require.Equal(t, (rows+111)/112, info.Segments, "rows in order: one segment per run")
				}
			})
		}
	})
}

// TestLargeStatementFailsLate checks a statement that fails after the
// background writer wrote and synced several segments leaves nothing: no
// row visible, no segment file left in the data directory.
func TestLargeStatementFailsLate(t *testing.T) {
	dir := t.TempDir()
	mem := newMem(t)
	ctx := context.Background()
	c, err := Open(ctx, dir, Options{Allocator: mem, AutoCompact: -1, RunRows: 50, BatchRows: 8, LogRows: 10})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	createTable(t, c, quotesDef)
	segFiles := func() []string {
		m, err := filepath.Glob(filepath.Join(dir, "seg-*"))
		require.NoError(t, err)
		return m
	}
	before := segFiles()
	for _, late := range []int{30, 120, 499} {
		var in strings.Builder
		for i := range 500 {
			sym := fmt.Sprintf("s%d", i)
			if i == late {
				sym = `\N` // NOT NULL violation
			}
			fmt.Fprintf(&in, "2024-01-01 00:00:%02d\t%s\t%d\n", i%60, sym, i)
		}
		tx := c.Begin()
		_, err := tx.CopyFrom(ctx, "quotes", strings.NewReader(in.String()), CopyOptions{})
		require.Equal(t, sqlerr.NotNullViolation, sqlerr.Code(err), "%v", err)
		require.Error(t, tx.Commit(ctx))
		require.Empty(t, scanRows(t, c, "quotes", ScanOptions{}))
		require.Equal(t, before, segFiles(), "no segment file of the failed statement is left")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
}

// TestDisorderedInputOneSegmentPerRun loads batches each in order but
// overlapping the one before (as from producers whose chunks interleave):
// once the order breaks, the rest goes in runs, one segment each, instead
// of a sorted run and a short streamed segment in turn. Keys with NULLs
// (sorted last, stably) take the comparison sort instead of the radix one.
func TestDisorderedInputOneSegmentPerRun(t *testing.T) {
	const rows, runRows, batchRows = 1000, 100, 16
	inputs := map[string]func(i int) string{
		"overlapping batches": func(i int) string {
			k := i%batchRows + i/batchRows*(batchRows/2)
			return fmt.Sprintf("2024-01-01 %02d:%02d:%02d", k/3600, k/60%60, k%60)
		},
		"NULL keys": func(i int) string {
			if i%7 == 3 {
				return ""
			}
			k := (i * 37) % 101
			return fmt.Sprintf("2024-01-01 00:%02d:%02d", k/60, k%60)
		},
	}
	modes(t, Options{AutoCompact: -1, RunRows: runRows, BatchRows: batchRows, LogRows: 10}, func(t *testing.T, open func() *Catalog) {
		for name, key := range inputs {
			t.Run(name, func(t *testing.T) {
				c := open()
				ctx := context.Background()
				def := quotesDef
				def.Name = "q_" + strings.ReplaceAll(name, " ", "_")
				createTable(t, c, def)
				var in strings.Builder
				type row struct {
					key string
					seq int
				}
				var want []row
				for i := range rows {
					k := key(i)
					fmt.Fprintf(&in, "%s,s%04d,1\n", k, i)
					want = append(want, row{k, i})
				}
				slices.SortStableFunc(want, func(a, b row) int {
					switch {
					case a.key == "" || b.key == "":
						return strings.Compare(b.key, a.key) // NULLs last
					}
					return strings.Compare(a.key, b.key)
				})
				tx := c.Begin()
				_, err := tx.CopyFrom(ctx, def.Name, strings.NewReader(in.String()), CopyOptions{Format: "csv"})
				require.NoError(t, err)
				require.NoError(t, tx.Commit(ctx))
				c = open()
				got := scanRows(t, c, def.Name, ScanOptions{Columns: []int{1}})
				require.Len(t, got, rows)
				for i, w := range want {
					require.Equal(t, fmt.Sprintf("s%04d", w.seq), got[i][0], "row %d", i)
				}
				info, err := c.Table(def.Name)
				require.NoError(t, err)
				// The first batch streams; the order breaks at the second;
				// runs end at the first batch boundary at or past runRows
				// rows (7 batches).
				runs := (rows - batchRows + 7*batchRows - 1) / (7 * batchRows)
				if name == "NULL keys" {
					runs = (rows + 7*batchRows - 1) / (7 * batchRows)
				}
				require.LessOrEqual(t, info.Segments, runs+1, "segments")
			})
		}
	})
}
