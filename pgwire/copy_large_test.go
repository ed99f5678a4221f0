package pgwire_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// TestCopyFromStdinLargeMessages sends COPY data in CopyData messages
// larger and smaller than the input buffer, cut through lines (clients
// such as pgx send 64 KiB ones; one here is larger than what a COPY keeps
// between messages): the server reads each large one into the last one's
// array, and every byte must arrive once, in order.
func TestCopyFromStdinLargeMessages(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	var data strings.Builder
	const rows = 60_000
	for i := range rows {
		fmt.Fprintf(&data, "%d\tn%s\t\\N\t\\N\n", 100+i, strings.Repeat("x", i%50))
	}
	in := data.String()
	r.send(&pgproto3.Query{String: "copy t from stdin"})
	require.Equal(t, []string{"G 0 [0 0 0 0]"}, r.recvN(1))
	sizes := []int{100, 20_000, 70_000, 65_536, 1_500_000, 30_000, 16_379, 16_380, 200_000, 3}
	for i := 0; len(in) > 0; i++ {
		n := min(len(in), sizes[i%len(sizes)])
		r.send(&pgproto3.CopyData{Data: []byte(in[:n])})
		in = in[n:]
	}
	r.send(&pgproto3.CopyDone{})
	require.Equal(t, []string{fmt.Sprintf("C COPY %d", rows), "Z I"}, r.untilReady())

	var out strings.Builder
	for _, m := range r.query("copy t to stdout") {
		if d, ok := strings.CutPrefix(m, "d "); ok {
			out.WriteString(d)
		}
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3+rows)
	for i, line := range lines[3:] {
		want := fmt.Sprintf("%d\tn%s\t\\N\t\\N", 100+i, strings.Repeat("x", i%50))
		if line != want {
			require.Equal(t, want, line, "row %d", i)
		}
	}
}
