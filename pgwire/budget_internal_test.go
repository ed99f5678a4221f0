package pgwire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestByteBudget(t *testing.T) {
	var b byteBudget
	b.init(100)
	require.True(t, b.reserve(60))
	require.True(t, b.reserve(40))
	got := make(chan bool)
	go func() { got <- b.reserve(10) }()
	select {
	case <-got:
		t.Fatal("reserve past the limit did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	b.release(60)
	require.True(t, <-got)
	// A message larger than the limit still goes through when nothing
	// else is queued.
	b.release(50)
	require.True(t, b.reserve(500))
	go func() { got <- b.reserve(1) }()
	time.Sleep(20 * time.Millisecond)
	b.close()
	require.False(t, <-got)
}
