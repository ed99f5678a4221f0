package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeapFloor checks that serve's heap floor raises the collector's
// heap goal to at least the floor, and that it steps aside when GOGC is
// set.
func TestHeapFloor(t *testing.T) {
	if v, ok := os.LookupEnv("GOGC"); ok {
		defer os.Setenv("GOGC", v)
		os.Unsetenv("GOGC")
	}
	goal := func() uint64 {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	floor := heapFloor()
	require.Len(t, floor, heapFloorSize)
	require.GreaterOrEqual(t, goal(), uint64(heapFloorSize)*3/2, "the floor is live heap")
	runtime.KeepAlive(floor)

	t.Setenv("GOGC", "100")
	require.Nil(t, heapFloor(), "GOGC set: no floor")
}
