package catalog

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// The crash test re-executes this test binary as a child that runs
// statements in a loop and prints "ACK <op>" after each commit returns; the
// parent SIGKILLs it at a random moment, reopens the directory and checks
// that every acknowledged statement is fully there, that the one in flight
// is either fully there or absent, and that ordered tables are in order.
const (
	envCrashDir   = "CATALOG_CRASH_DIR"
	envCrashStart = "CATALOG_CRASH_START"
	crashTables   = 3
)

func crashDef(i int) TableDef {
	return TableDef{
		Name: fmt.Sprintf("t%d", i),
		Columns: []Column{
			{Name: "ts", Type: sqltypes.TimestampType},
			{Name: "op", Type: sqltypes.Int8Type, NotNull: true},
			{Name: "rn", Type: sqltypes.Int4Type, NotNull: true},
			{Name: "note", Type: sqltypes.TextType},
		},
		OrderBy: []string{"ts"},
	}
}

// crashOp is what statement number op does, derived from op alone so the
// parent can replay it.
type crashOp struct {
	reset  int         // table dropped and re-created (DROP + CREATE in one commit), or -1
	writes map[int]int // table -> rows inserted
	copy   bool        // load through COPY text format instead of INSERT
}

func planOp(op int) crashOp {
	rng := rand.New(rand.NewPCG(uint64(op), 7))
	tbl := op % crashTables
	switch {
	case op%13 == 5:
		return crashOp{reset: tbl}
	case op%5 == 2:
		// One transaction writing two tables.
		return crashOp{reset: -1, writes: map[int]int{tbl: 1 + rng.IntN(150), (tbl + 1) % crashTables: 1 + rng.IntN(150)}}
	case op%3 == 1:
		return crashOp{reset: -1, writes: map[int]int{tbl: 1 + rng.IntN(300)}, copy: true}
	}
	return crashOp{reset: -1, writes: map[int]int{tbl: 1 + rng.IntN(300)}}
}

// crashTS is the ts of row rn of op: few distinct values, so equal keys
// across statements test stability; about 1 in 20 is NULL.
func crashTS(op, rn int) (int64, bool) {
	h := uint64(op)*1000003 + uint64(rn)*7919
	h ^= h >> 13
	h *= 0x9E3779B97F4A7C15
	h ^= h >> 29
	if h%20 == 0 {
		return 0, false
	}
	return int64(h % 500), true
}

func crashBatch(mem memory.Allocator, schema *arrow.Schema, op, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for rn := 0; rn < n; rn++ {
		if ts, ok := crashTS(op, rn); ok {
			b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
		} else {
			b.Field(0).AppendNull()
		}
		b.Field(1).(*array.Int64Builder).Append(int64(op))
		b.Field(2).(*array.Int32Builder).Append(int32(rn))
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("op%d-row%d", op, rn))
	}
	return b.NewRecordBatch()
}

// crashCopyText renders the same rows in COPY text format.
func crashCopyText(op, n int) string {
	var sb strings.Builder
	for rn := 0; rn < n; rn++ {
		if ts, ok := crashTS(op, rn); ok {
			sb.WriteString(time.UnixMicro(ts).UTC().Format("2006-01-02 15:04:05.999999"))
		} else {
			sb.WriteString(`\N`)
		}
		fmt.Fprintf(&sb, "\t%d\t%d\top%d-row%d\n", op, rn, op, rn)
	}
	return sb.String()
}

func runCrashChild(t *testing.T, dir string, start int) {
	ctx := context.Background()
	c, err := Open(ctx, dir, Options{RunRows: 100, BatchRows: 64, CompactRows: 400, AutoCompact: 4})
	if err != nil {
		fmt.Println("OPEN", err)
		os.Exit(2)
	}
	tx := c.Begin()
	for i := 0; i < crashTables; i++ {
		if err := tx.CreateTable(ctx, crashDef(i), true); err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "READY")
	out.Flush()
	for op := start; ; op++ {
		if err := applyCrashOp(ctx, c, op); err != nil {
			fmt.Println("ERR", op, err)
			os.Exit(2)
		}
		fmt.Fprintf(out, "ACK %d\n", op)
		out.Flush()
		if op%17 == 0 {
			if err := c.Compact(ctx, fmt.Sprintf("t%d", op%crashTables)); err != nil {
				fmt.Println("ERR compact", err)
				os.Exit(2)
			}
		}
	}
}

func applyCrashOp(ctx context.Context, c *Catalog, op int) error {
	p := planOp(op)
	tx := c.Begin()
	if p.reset >= 0 {
		name := fmt.Sprintf("t%d", p.reset)
		if err := tx.DropTable(ctx, name, false); err != nil {
			return err
		}
		if err := tx.CreateTable(ctx, crashDef(p.reset), false); err != nil {
			return err
		}
	}
	for tbl := 0; tbl < crashTables; tbl++ {
		n, ok := p.writes[tbl]
		if !ok {
			continue
		}
		name := fmt.Sprintf("t%d", tbl)
		if p.copy {
			if _, err := tx.CopyFrom(ctx, name, strings.NewReader(crashCopyText(op, n)), CopyOptions{}); err != nil {
				return err
			}
			continue
		}
		info, err := c.Table(name)
		if err != nil {
			return err
		}
		rec := crashBatch(c.mem, info.Schema, op, n)
		rdr, err := array.NewRecordReader(info.Schema, []arrow.RecordBatch{rec})
		rec.Release()
		if err != nil {
			return err
		}
		_, err = tx.Insert(ctx, name, rdr)
		rdr.Release()
		if err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// crashModel is the expected content: per table, the ops whose rows it
// holds, in commit order.
type crashModel [crashTables][]int

func (m crashModel) apply(op int) crashModel {
	p := planOp(op)
	if p.reset >= 0 {
		m[p.reset] = nil
	}
	for tbl := range p.writes {
		m[tbl] = append(append([]int(nil), m[tbl]...), op)
	}
	return m
}

// crashCheck verifies the directory holds exactly model m: every row of each
// op, correct values, in (ts NULLS LAST, op, rn) order.
func crashCheck(t *testing.T, dir string, m crashModel) error {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c, err := Open(context.Background(), dir, Options{Allocator: mem, AutoCompact: -1})
	if err != nil {
		return err
	}
	defer c.Close()
	for tbl := 0; tbl < crashTables; tbl++ {
		snap, err := c.Snapshot()
		if err != nil {
			return err
		}
		err = crashCheckTable(c, snap, tbl, m[tbl])
		snap.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func crashCheckTable(c *Catalog, snap *Snapshot, tbl int, ops []int) error {
	name := fmt.Sprintf("t%d", tbl)
	r, err := snap.Scan(context.Background(), name, ScanOptions{BatchSize: 100})
	if err != nil {
		if len(ops) == 0 {
			return nil // not created yet: the child died before its first commit
		}
		return err
	}
	defer r.Release()
	want := map[int]int{}
	for _, op := range ops {
		want[op] = planOp(op).writes[tbl]
	}
	got := map[int]int{}
	type key struct {
		null   bool
		ts     int64
		op, rn int64
	}
	var prev *key
	for r.Next() {
		rec := r.RecordBatch()
		tsc := rec.Column(0).(*array.Timestamp)
		opc := rec.Column(1).(*array.Int64)
		rnc := rec.Column(2).(*array.Int32)
		note := rec.Column(3).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			k := key{null: tsc.IsNull(i), op: opc.Value(i), rn: int64(rnc.Value(i))}
			if !k.null {
				k.ts = int64(tsc.Value(i))
			}
			wts, wok := crashTS(int(k.op), int(k.rn))
			if wok == k.null || (wok && wts != k.ts) || note.Value(i) != fmt.Sprintf("op%d-row%d", k.op, k.rn) {
				return fmt.Errorf("%s: row op=%d rn=%d has wrong values", name, k.op, k.rn)
			}
			if prev != nil {
				less := func(a, b key) bool {
					if a.null != b.null {
						return !a.null
					}
					if a.ts != b.ts {
						return a.ts < b.ts
					}
					if a.op != b.op {
						return a.op < b.op
					}
					return a.rn < b.rn
				}
				if !less(*prev, k) {
					return fmt.Errorf("%s: out of order: %+v then %+v", name, *prev, k)
				}
			}
			kk := k
			prev = &kk
			got[int(k.op)]++
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("%s: rows per op %v, want %v", name, got, want)
	}
	return nil
}

func TestCrashRecovery(t *testing.T) {
	if dir := os.Getenv(envCrashDir); dir != "" {
		start, _ := strconv.Atoi(os.Getenv(envCrashStart))
		runCrashChild(t, dir, start)
		return
	}
	if testing.Short() {
		t.Skip("crash test spawns child processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var model crashModel
	next := 0 // the first op the next child runs
	kills, acked, inflight := 0, 0, 0
	// A safety net for an overloaded machine; typical runs take 12 s (25 s
	// with -race).
	deadline := time.Now().Add(100 * time.Second)
	for kills < 50 && time.Now().Before(deadline) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashRecovery$")
		cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashStart+"="+strconv.Itoa(next))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		acks := make(chan int, 1<<16)
		lines := make(chan string, 16)
		ready := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if n, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
					op, _ := strconv.Atoi(n)
					acks <- op
				} else if sc.Text() == "READY" {
					close(ready)
				} else {
					lines <- sc.Text()
				}
			}
			close(acks)
		}()
		// Kill at a random moment: one time in ten while the child starts
		// up and opens the directory (process start-up time varies a lot
		// under -race), otherwise in the middle of its stream of commits.
		if rng.IntN(10) == 0 {
			time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		} else {
			select {
			case <-ready:
			case <-time.After(10 * time.Second):
				t.Fatal("child did not start")
			}
			time.Sleep(time.Duration(rng.IntN(250)) * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		last := next - 1
		for op := range acks {
			require.Equal(t, last+1, op, "acks are in op order")
			last = op
		}
		_ = cmd.Wait()
		select {
		case l := <-lines:
			t.Fatalf("child failed: %s", l)
		default:
		}
		kills++
		for op := next; op <= last; op++ {
			model = model.apply(op)
			acked++
		}
		// The op after the last ack may or may not have committed; it must
		// be all or nothing.
		errAbsent := crashCheck(t, dir, model)
		if errAbsent == nil {
			next = last + 1
			continue
		}
		withNext := model.apply(last + 1)
		if errPresent := crashCheck(t, dir, withNext); errPresent != nil {
			t.Fatalf("after kill %d (last ack %d): state is neither without op %d (%v) nor with it (%v)", kills, last, last+1, errAbsent, errPresent)
		}
		model = withNext
		next = last + 2
		inflight++
	}
	require.GreaterOrEqual(t, kills, 50, "kills within the time budget")
	require.Greater(t, acked, 2*kills, "children made progress")
	t.Logf("%d kills, %d acknowledged statements, %d committed but unacknowledged when killed", kills, acked, inflight)
}
