package planner

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeStored: every table has t = 10 × row index.
type fakeStored struct{ before []int64 }

func (f *fakeStored) ValueAt(s *Scan, col int, row int64) (int64, bool, error) {
	return 10 * row, true, nil
}

func (f *fakeStored) Count(s *Scan) (int64, error) { return 8, nil }

func (f *fakeStored) RowsBefore(s *Scan, v int64) (int64, error) {
	f.before = append(f.before, v)
	return max(v+9, 0) / 10, nil
}

// withRows gives every Scan of n a table of rows rows (the fixture's are
// empty).
func withRows(n Node, rows int64) {
	if s, ok := n.(*Scan); ok {
		t := *s.Table
		t.Rows = rows
		s.Table = &t
	}
	if j, ok := n.(*AsofJoin); ok {
		withRows(j.Left, rows)
		for _, r := range j.Rights {
			withRows(r.Input, rows)
		}
		return
	}
	for _, c := range n.Children() {
		withRows(c, rows)
	}
}

func partitionOf(t *testing.T, sql string, n int, st Stored) (Node, []Node) {
	t.Helper()
	cat := newCatalog(t)
	snap, err := cat.Snapshot()
	require.NoError(t, err)
	t.Cleanup(snap.Release)
	p, err := plan(t, snap, sql)
	require.NoError(t, err, sql)
	root := p.(*Query).Root
	withRows(root, 100)
	parts, err := Partition(root, n, st)
	require.NoError(t, err)
	return root, parts
}

func scanOf(n Node) *Scan {
	for {
		switch x := n.(type) {
		case *Scan:
			return x
		case *AsofJoin:
			n = x.Left
		default:
			n = n.Children()[0]
		}
	}
}

func TestPartitionRowWise(t *testing.T) {
	st := &fakeStored{}
	root, parts := partitionOf(t, `SELECT e.t, e.v, x.x FROM events e ASOF LEFT JOIN ticks x ON t BETWEEN -15 AND 0 USING (k) WHERE e.v <> 'a'`, 4, st)
	require.Len(t, parts, 4)
	require.Nil(t, scanOf(root).Rows, "the plan itself is unchanged")
	for i, p := range parts {
		require.NoError(t, Validate(p))
		want := RowRange{Start: int64(25 * i), End: int64(25 * (i + 1))}
		if i == 3 {
			want.End = -1
		}
		require.Equal(t, want, *scanOf(p).Rows, "part %d", i)
		var j *AsofJoin
		for n := p; j == nil; n = n.Children()[0] {
			j, _ = n.(*AsofJoin)
		}
		right := underFilters(j.Rights[0].Input)
		if i == 0 {
			require.Nil(t, right.Rows, "the first part reads the right input from its start")
			continue
		}
		// The part's first left t is 250·i; right rows from t = 250·i − 15
		// on, that is from row 25·i − 1.
		require.Equal(t, &RowRange{Start: int64(25*i - 1), End: -1}, right.Rows, "part %d", i)
	}
	require.Equal(t, []int64{235, 485, 735}, st.before)

	// A backward join reads the right input from its start in every part.
	_, parts = partitionOf(t, `SELECT e.t, x.x FROM events e ASOF JOIN ticks x ON e.k = x.k AND e.t >= x.t`, 2, &fakeStored{})
	require.Len(t, parts, 2)
	for _, p := range parts {
		j := p.Children()[0].(*AsofJoin)
		require.Nil(t, underFilters(j.Rights[0].Input).Rows)
	}

	// More parts than rows: one per row.
	cat := newCatalog(t)
	snap, err := cat.Snapshot()
	require.NoError(t, err)
	defer snap.Release()
	p, err := plan(t, snap, `SELECT * FROM heap`)
	require.NoError(t, err)
	withRows(p.(*Query).Root, 3)
	parts, err = Partition(p.(*Query).Root, 8, nil)
	require.NoError(t, err)
	require.Len(t, parts, 3)
	parts, err = Partition(p.(*Query).Root, 1, nil)
	require.NoError(t, err)
	require.Nil(t, parts)

	// A range scan is balanced by the rows of its range (8 here).
	_, parts = partitionOf(t, `SELECT * FROM events WHERE t >= 500`, 4, &fakeStored{})
	require.NotNil(t, scanOf(parts[0]).Range)
	require.Equal(t, RowRange{Start: 2, End: 4}, *scanOf(parts[1]).Rows)
}

func TestPartitionNotRowWise(t *testing.T) {
	for _, sql := range []string{
		`SELECT * FROM events ORDER BY v`,
		`SELECT count(*) FROM events`,
		`SELECT k, max(t) FROM events GROUP BY k`,
		`SELECT * FROM events LIMIT 3`,
		`SELECT DISTINCT k FROM events`,
		`SELECT t, row_number() OVER () FROM events`,
		`SELECT t FROM events UNION ALL SELECT t FROM ticks`,
		`SELECT * FROM events JOIN ticks USING (t)`,
		`SELECT t, random() FROM events`,
		`SELECT t, (SELECT max(x) FROM ticks) FROM events`,
		`SELECT * FROM events e ASOF FULL JOIN ticks x ON t BETWEEN -5 AND 0 USING (k)`,
		`SELECT * FROM events e ASOF LEFT JOIN (SELECT * FROM ticks ORDER BY t LIMIT 5) x ON t BETWEEN -5 AND 0 USING (k)`,
		`SELECT * FROM generate_series(1, 10) g`,
	} {
		_, parts := partitionOf(t, sql, 4, &fakeStored{})
		require.Nil(t, parts, sql)
	}
}
