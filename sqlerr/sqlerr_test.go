package sqlerr

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCodeThroughWrapping(t *testing.T) {
	base := New(UndefinedTable, "relation %q does not exist", "quotes").WithPosition(15).WithHint("create it first")
	wrapped := fmt.Errorf("planning: %w", base)
	require.Equal(t, UndefinedTable, Code(wrapped))
	e, ok := As(wrapped)
	require.True(t, ok)
	require.Equal(t, 15, e.Position)
	require.Equal(t, "create it first", e.Hint)
	require.Equal(t, `relation "quotes" does not exist`, e.Message)
}

func TestCopiesDoNotAlias(t *testing.T) {
	a := New(SyntaxError, "x")
	b := a.WithPosition(3)
	require.Equal(t, 0, a.Position)
	require.Equal(t, 3, b.Position)
}

func TestCodeOfOtherErrors(t *testing.T) {
	require.Equal(t, "", Code(nil))
	require.Equal(t, QueryCanceled, Code(context.Canceled))
	require.Equal(t, QueryCanceled, Code(fmt.Errorf("x: %w", context.DeadlineExceeded)))
	require.Equal(t, InternalError, Code(errors.New("boom")))
	require.Equal(t, "canceling statement due to user request", From(context.Canceled).Message)
}

func TestWrapKeepsCause(t *testing.T) {
	e := Wrap(fs.ErrNotExist, IOError, "could not open file %q", "x.csv")
	require.ErrorIs(t, e, fs.ErrNotExist)
	require.Equal(t, IOError, Code(e))
}
