package memengine_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/pgwire/internal/memengine"
)

// TestResultClosedUnreadReleasesItsRows is the regression test of what
// FuzzWire found: a one-row SELECT or SHOW result closed before it was read
// (its statement cancelled between Execute and the first Next) held its
// batch for good.
func TestResultClosedUnreadReleasesItsRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	eng := memengine.New(mem)
	defer eng.Release()
	ctx := context.Background()
	sess, err := eng.Connect(ctx, pgwire.StartupInfo{User: "u", Database: "asofsql"})
	require.NoError(t, err)
	defer sess.Close()
	for _, sql := range []string{"select 1, 'x'", "show TimeZone"} {
		st, err := sess.Prepare(ctx, sql, nil)
		require.NoError(t, err)
		res, err := st.Execute(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, res.Close())
		require.NoError(t, st.Close())
	}
	// And one cancelled before its first Next.
	st, err := sess.Prepare(ctx, "select 2", nil)
	require.NoError(t, err)
	res, err := st.Execute(ctx, nil)
	require.NoError(t, err)
	dead, cancel := context.WithCancel(ctx)
	cancel()
	_, err = res.Next(dead)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, res.Close())
	require.NoError(t, st.Close())
}
