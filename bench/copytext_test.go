package main

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCopyTextSource checks the text and CSV COPY workloads send the rows
// the binary one does, in lines of at most 8 KiB per read.
func TestCopyTextSource(t *testing.T) {
	base := time.Date(2024, 1, 2, 9, 30, 0, 0, time.UTC)
	for _, csv := range []bool{false, true} {
		src := &copyTextSource{n: 5000, csv: csv}
		var all strings.Builder
		buf := make([]byte, 65536)
		for {
			n, err := src.Read(buf)
			require.LessOrEqual(t, n, 8192)
			all.Write(buf[:n])
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.Equal(t, byte('\n'), buf[n-1], "whole lines")
		}
		lines := strings.Split(strings.TrimSuffix(all.String(), "\n"), "\n")
		require.Len(t, lines, 5000)
		sep := "\t"
		if csv {
			sep = ","
		}
		for i, line := range lines {
			row := int64(i + 1)
			f := strings.Split(line, sep)
			require.Len(t, f, 3)
			ts, err := time.Parse("2006-01-02 15:04:05.000000", f[0])
			require.NoError(t, err)
			require.Equal(t, base.Add(time.Duration(row)*time.Microsecond), ts)
			require.Equal(t, "S"+strconv.Itoa(int(row%100)), f[1])
			px, err := strconv.ParseFloat(f[2], 64)
			require.NoError(t, err)
			require.Equal(t, float64(row%1000)/8, px)
		}
	}
}
