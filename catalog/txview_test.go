package catalog

import (
	"context"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"
)

// txInsert runs one INSERT statement of rows in tx.
func txInsert(t *testing.T, c *Catalog, tx *Tx, name string, rows ...[]any) {
	t.Helper()
	info, err := c.Table(name)
	if err != nil { // created in tx: the schema of kvDef
		info = &TableInfo{Schema: kvSchema(t, c)}
	}
	r := reader(t, info.Schema, batch(t, c.mem, info.Schema, rows...))
	defer r.Release()
	_, err = tx.Insert(context.Background(), name, r)
	require.NoError(t, err)
}

func kvSchema(t *testing.T, c *Catalog) *arrow.Schema {
	t.Helper()
	m, err := newTableMeta(0, kvDef)
	require.NoError(t, err)
	return m.schema
}

// viewRows reads table name through tx's view of the latest commit.
func viewRows(t *testing.T, c *Catalog, tx *Tx, name string) []string {
	t.Helper()
	base, err := c.Snapshot()
	require.NoError(t, err)
	defer base.Release()
	v, err := tx.View(base)
	require.NoError(t, err)
	defer v.Release()
	return keysOf(snapRows(t, v, name, ScanOptions{}))
}

func keyIs(pred func(k int) bool) func([]string) bool {
	return func(r []string) bool {
		k, _ := strconv.Atoi(r[0])
		return pred(k)
	}
}

// A view is the base with the transaction's operations on top; DELETE and
// UPDATE of the transaction's own rows edit them where they wait, and
// Commit applies exactly what is left.
func TestTxViewOwnRows(t *testing.T) {
	ctx := context.Background()
	modes(t, Options{AutoCompact: -1, RunRows: 4, BatchRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, kvDef)
		insert(t, c, "kv", kvRows(5, 1, 3)...)
		tx := c.Begin()
		defer tx.Rollback()
		txInsert(t, c, tx, "kv", kvRows(4, 2)...)
		txInsert(t, c, tx, "kv", kvRows(6, 0, 4)...)
		// An ordered table scans in key order, committed rows first among
		// equal keys... here no ties: every key once but 4, the block's
		// rows in statement order.
		require.Equal(t, []string{"0:v0", "1:v1", "2:v2", "3:v3", "4:v4", "4:v4", "5:v5", "6:v6"}, viewRows(t, c, tx, "kv"))
		require.Equal(t, []string{"1:v1", "3:v3", "5:v5"}, keysOf(scanRows(t, c, "kv", ScanOptions{})), "others see nothing")

		// DELETE of own rows (2, both 4s, 6) and a committed one (3).
		n, err := tx.Delete(ctx, "kv", DeleteOptions{Where: where(c.mem, keyIs(func(k int) bool { return k >= 2 && k != 5 }))})
		require.NoError(t, err)
		require.EqualValues(t, 5, n)
		require.Equal(t, []string{"0:v0", "1:v1", "5:v5"}, viewRows(t, c, tx, "kv"))
		// UPDATE twice of an own row and a committed one.
		n, err = tx.Update(ctx, "kv", UpdateOptions{Range: &Range{Hi: 1}, Set: setV(c, "u", 10)})
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		n, err = tx.Update(ctx, "kv", UpdateOptions{Where: where(c.mem, keyIs(func(k int) bool { return k == 10 })), Set: setV(c, "w", 0)})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.Equal(t, []string{"5:v5", "10:v0uw", "11:v1u"}, viewRows(t, c, tx, "kv"))
		// DELETE without WHERE drops whole segments, own ones too.
		txInsert(t, c, tx, "kv", kvRows(7)...)
		n, err = tx.Delete(ctx, "kv", DeleteOptions{Range: &Range{Lo: 6, Hi: 7}})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.NoError(t, tx.Commit(ctx))
		require.Equal(t, []string{"5:v5", "10:v0uw", "11:v1u"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))
		c = open() // the log replays to the same rows
		require.Equal(t, []string{"5:v5", "10:v0uw", "11:v1u"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))
	})
}

// Large statements' segment files, truncates, created tables and rollback.
func TestTxViewSegmentsAndDDL(t *testing.T) {
	ctx := context.Background()
	modes(t, Options{AutoCompact: -1, RunRows: 2, LogRows: 3, BatchRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, kvDef)
		insert(t, c, "kv", kvRows(1, 9)...)
		tx := c.Begin()
		txInsert(t, c, tx, "kv", kvRows(8, 2, 6, 4)...) // more than LogRows: segment files
		txInsert(t, c, tx, "kv", kvRows(5)...)
		require.Equal(t, []string{"1:v1", "2:v2", "4:v4", "5:v5", "6:v6", "8:v8", "9:v9"}, viewRows(t, c, tx, "kv"))
		n, err := tx.Delete(ctx, "kv", DeleteOptions{Where: where(c.mem, keyIs(func(k int) bool { return k%2 == 0 && k < 8 }))})
		require.NoError(t, err)
		require.EqualValues(t, 3, n)
		require.Equal(t, []string{"1:v1", "5:v5", "8:v8", "9:v9"}, viewRows(t, c, tx, "kv"))
		other := kvDef
		other.Name = "other"
		require.NoError(t, tx.CreateTable(ctx, other, false))
		txInsert(t, c, tx, "other", kvRows(3)...)
		require.Equal(t, []string{"3:v3"}, viewRows(t, c, tx, "other"))
		require.NoError(t, tx.Commit(ctx))
		require.Equal(t, []string{"1:v1", "5:v5", "8:v8", "9:v9"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))
		require.Equal(t, []string{"3:v3"}, keysOf(scanRows(t, c, "other", ScanOptions{})))

		// TRUNCATE then INSERT; rollback leaves the committed rows.
		tx = c.Begin()
		require.NoError(t, tx.Truncate(ctx, "kv"))
		require.Empty(t, viewRows(t, c, tx, "kv"))
		txInsert(t, c, tx, "kv", kvRows(7)...)
		base, err := c.Snapshot()
		require.NoError(t, err)
		v, err := tx.View(base)
		require.NoError(t, err)
		base.Release()
		tx.Rollback()
		require.Equal(t, []string{"7:v7"}, keysOf(snapRows(t, v, "kv", ScanOptions{})), "a view outlives its statement's transaction")
		v.Release()
		require.Equal(t, []string{"1:v1", "5:v5", "8:v8", "9:v9"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))
	})
}

// Under a concurrent committer the view is the base it is given: the
// latest commit (READ COMMITTED) or the transaction's first snapshot
// (REPEATABLE READ), with the transaction's rows on top either way.
func TestTxViewConcurrentCommit(t *testing.T) {
	modes(t, Options{AutoCompact: -1}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, kvDef)
		insert(t, c, "kv", kvRows(1)...)
		first, err := c.Snapshot()
		require.NoError(t, err)
		defer first.Release()
		tx := c.Begin()
		defer tx.Rollback()
		txInsert(t, c, tx, "kv", kvRows(3)...)
		insert(t, c, "kv", kvRows(2)...) // another transaction commits
		require.Equal(t, []string{"1:v1", "2:v2", "3:v3"}, viewRows(t, c, tx, "kv"))
		v, err := tx.View(first)
		require.NoError(t, err)
		defer v.Release()
		require.Equal(t, []string{"1:v1", "3:v3"}, keysOf(snapRows(t, v, "kv", ScanOptions{})))
		require.NoError(t, tx.Commit(context.Background()))
		require.Equal(t, []string{"1:v1", "2:v2", "3:v3"}, keysOf(scanRows(t, c, "kv", ScanOptions{})))
	})
}

// Views of one transaction share its private segment, each reading the
// rows of the statements before it: an earlier view (an open cursor) does
// not change when later statements add, delete or truncate rows.
func TestTxViewInsensitive(t *testing.T) {
	ctx := context.Background()
	modes(t, Options{AutoCompact: -1, BatchRows: 2}, func(t *testing.T, open func() *Catalog) {
		c := open()
		createTable(t, c, kvDef)
		tx := c.Begin()
		defer tx.Rollback()
		view := func() *Snapshot {
			base, err := c.Snapshot()
			require.NoError(t, err)
			defer base.Release()
			v, err := tx.View(base)
			require.NoError(t, err)
			return v
		}
		rows := func(v *Snapshot) []string { return keysOf(snapRows(t, v, "kv", ScanOptions{})) }
		txInsert(t, c, tx, "kv", kvRows(3, 1)...)
		v1 := view()
		defer v1.Release()
		txInsert(t, c, tx, "kv", kvRows(2)...)
		v2 := view()
		defer v2.Release()
		_, err := tx.Delete(ctx, "kv", DeleteOptions{Where: where(c.mem, keyIs(func(k int) bool { return k == 1 }))})
		require.NoError(t, err)
		v3 := view()
		defer v3.Release()
		require.NoError(t, tx.Truncate(ctx, "kv"))
		txInsert(t, c, tx, "kv", kvRows(9)...)
		require.Equal(t, []string{"1:v1", "3:v3"}, rows(v1))
		require.Equal(t, []string{"1:v1", "2:v2", "3:v3"}, rows(v2))
		require.Equal(t, []string{"2:v2", "3:v3"}, rows(v3))
		require.Equal(t, []string{"9:v9"}, viewRows(t, c, tx, "kv"))
	})
}
