package catalog

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
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
	// del/upd: a DELETE (rows with ts in [lo, hi], only even rn when
	// even) or an UPDATE (ts += 137, note += "u") of table tbl, before
	// the writes of the same transaction.
	del, upd bool
	tbl      int
	lo, hi   int64
	even     bool
}

func planOp(op int) crashOp {
	rng := rand.New(rand.NewPCG(uint64(op), 7))
	tbl := op % crashTables
	lo := int64(rng.IntN(450))
	switch {
	case op%13 == 5:
		return crashOp{reset: tbl}
	case op%11 == 3:
		return crashOp{reset: -1, del: true, tbl: tbl, lo: lo, hi: lo + int64(rng.IntN(120)), even: op%2 == 0}
	case op%7 == 4:
		return crashOp{reset: -1, upd: true, tbl: tbl, lo: lo, hi: lo + int64(rng.IntN(60))}
	case op%17 == 8:
		// DELETE and INSERT in one transaction.
		return crashOp{reset: -1, del: true, tbl: tbl, lo: lo, hi: lo + 50, writes: map[int]int{tbl: 1 + rng.IntN(40)}}
	case op%5 == 2:
		// One transaction writing two tables.
		return crashOp{reset: -1, writes: map[int]int{tbl: 1 + rng.IntN(150), (tbl + 1) % crashTables: 1 + rng.IntN(150)}}
	case op%3 == 1:
		return crashOp{reset: -1, writes: map[int]int{tbl: 1 + rng.IntN(300)}, copy: true}
	}
	// Mostly small statements (through the log), sometimes a large one
	// (its own segment files: RunRows is 100 in the child).
	n := 1 + rng.IntN(20)
	if rng.IntN(4) == 0 {
		n = 1 + rng.IntN(300)
	}
	return crashOp{reset: -1, writes: map[int]int{tbl: n}}
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
	began := time.Now()
	c, err := Open(ctx, dir, Options{RunRows: 100, BatchRows: 64, CompactRows: 400, AutoCompact: 4, CheckpointRows: 700})
	opened := time.Since(began)
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
	fmt.Fprintln(out, "READY", opened.Nanoseconds())
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
		if op%9 == 0 {
			if err := c.Checkpoint(ctx); err != nil {
				fmt.Println("ERR checkpoint", err)
				os.Exit(2)
			}
		}
	}
}

func applyCrashOp(ctx context.Context, c *Catalog, op int) error {
	p := planOp(op)
	tx := c.Begin()
	defer tx.Rollback()
	if p.reset >= 0 {
		name := fmt.Sprintf("t%d", p.reset)
		if err := tx.DropTable(ctx, name, false); err != nil {
			return err
		}
		if err := tx.CreateTable(ctx, crashDef(p.reset), false); err != nil {
			return err
		}
	}
	name := fmt.Sprintf("t%d", p.tbl)
	rng := &Range{Lo: p.lo, Hi: p.hi}
	if p.del {
		var w Predicate
		if p.even {
			w = func(_ context.Context, rec arrow.RecordBatch) (arrow.Array, error) {
				b := array.NewBooleanBuilder(c.mem)
				defer b.Release()
				rn := rec.Column(2).(*array.Int32)
				for i := 0; i < rn.Len(); i++ {
					b.Append(rn.Value(i)%2 == 0)
				}
				return b.NewArray(), nil
			}
		}
		if _, err := tx.Delete(ctx, name, DeleteOptions{Range: rng, Where: w}); err != nil {
			return err
		}
	}
	if p.upd {
		_, err := tx.Update(ctx, name, UpdateOptions{Range: rng, Set: func(_ context.Context, old arrow.RecordBatch) (arrow.RecordBatch, error) {
			b := array.NewRecordBuilder(c.mem, old.Schema())
			defer b.Release()
			tsc := old.Column(0).(*array.Timestamp)
			note := old.Column(3).(*array.String)
			for i := 0; i < int(old.NumRows()); i++ {
				b.Field(0).(*array.TimestampBuilder).Append(tsc.Value(i) + 137)
				b.Field(1).(*array.Int64Builder).Append(old.Column(1).(*array.Int64).Value(i))
				b.Field(2).(*array.Int32Builder).Append(old.Column(2).(*array.Int32).Value(i))
				b.Field(3).(*array.StringBuilder).Append(note.Value(i) + "u")
			}
			return b.NewRecordBatch(), nil
		}})
		if err != nil {
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

// crow is one row of the model: its identity (op, rn), values, and its
// place in insertion order (the statement that last wrote it, and its
// index there).
type crow struct {
	op, rn       int
	null         bool
	ts           int64
	note         string
	insOp, insIx int
}

func crowLess(a, b crow) int {
	switch {
	case a.null != b.null:
		if a.null {
			return 1
		}
		return -1
	case a.ts != b.ts:
		return cmp.Compare(a.ts, b.ts)
	case a.insOp != b.insOp:
		return cmp.Compare(a.insOp, b.insOp)
	}
	return cmp.Compare(a.insIx, b.insIx)
}

// crashModel is the expected content of each table, in scan order.
type crashModel [crashTables][]crow

func (m crashModel) apply(op int) crashModel {
	p := planOp(op)
	if p.reset >= 0 {
		m[p.reset] = nil
	}
	in := func(r crow) bool { return !r.null && r.ts >= p.lo && r.ts <= p.hi }
	if p.del {
		var keep []crow
		for _, r := range m[p.tbl] {
			if !(in(r) && (!p.even || r.rn%2 == 0)) {
				keep = append(keep, r)
			}
		}
		m[p.tbl] = keep
	}
	if p.upd {
		var rows []crow
		k := 0
		for _, r := range m[p.tbl] { // in scan order
			if in(r) {
				r.ts += 137
				r.note += "u"
				r.insOp, r.insIx = op, k
				k++
			}
			rows = append(rows, r)
		}
		slices.SortStableFunc(rows, crowLess)
		m[p.tbl] = rows
	}
	for tbl, n := range p.writes {
		rows := slices.Clone(m[tbl])
		for rn := 0; rn < n; rn++ {
			ts, ok := crashTS(op, rn)
			rows = append(rows, crow{op: op, rn: rn, null: !ok, ts: ts, note: fmt.Sprintf("op%d-row%d", op, rn), insOp: op, insIx: rn})
		}
		slices.SortStableFunc(rows, crowLess)
		m[tbl] = rows
	}
	return m
}

// crashCheck verifies the directory holds exactly model m, rows in scan
// order with their values. It recovers without writing (inspect), so the
// next child's Open is the recovery that counts.
func crashCheck(t *testing.T, dir string, m crashModel) error {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c, err := Open(context.Background(), dir, Options{Allocator: mem, AutoCompact: -1, CheckpointRows: -1, inspect: true})
	if err != nil {
		return err
	}
	defer c.abandon() // a clean Close would checkpoint
	for tbl := 0; tbl < crashTables; tbl++ {
		snap, err := c.Snapshot()
		if err != nil {
			return err
		}
		err = crashCheckTable(snap, tbl, m[tbl])
		snap.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func crashCheckTable(snap *Snapshot, tbl int, want []crow) error {
	name := fmt.Sprintf("t%d", tbl)
	r, err := snap.Scan(context.Background(), name, ScanOptions{BatchSize: 100})
	if err != nil {
		if len(want) == 0 {
			return nil // not created yet: the child died before its first commit
		}
		return err
	}
	defer r.Release()
	i := 0
	for r.Next() {
		rec := r.RecordBatch()
		tsc := rec.Column(0).(*array.Timestamp)
		opc := rec.Column(1).(*array.Int64)
		rnc := rec.Column(2).(*array.Int32)
		note := rec.Column(3).(*array.String)
		for k := 0; k < int(rec.NumRows()); k++ {
			if i >= len(want) {
				return fmt.Errorf("%s: more rows than the %d expected", name, len(want))
			}
			w := want[i]
			got := crow{op: int(opc.Value(k)), rn: int(rnc.Value(k)), null: tsc.IsNull(k), note: note.Value(k)}
			if !got.null {
				got.ts = int64(tsc.Value(k))
			}
			if got.op != w.op || got.rn != w.rn || got.null != w.null || got.ts != w.ts || got.note != w.note {
				return fmt.Errorf("%s: row %d is op=%d rn=%d ts=%d null=%v %q, want op=%d rn=%d ts=%d null=%v %q",
					name, i, got.op, got.rn, got.ts, got.null, got.note, w.op, w.rn, w.ts, w.null, w.note)
			}
			i++
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if i != len(want) {
		return fmt.Errorf("%s: %d rows, want %d", name, i, len(want))
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
	var recovery []time.Duration
	// Typical runs take 15 s (30 s with -race); a loaded machine only
	// makes them slower, never failing: nothing here is timed except
	// the hang guards.
	for kills < 50 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashRecovery$")
		cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashStart+"="+strconv.Itoa(next))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		acks := make(chan int, 1<<16)
		lines := make(chan string, 16)
		ready := make(chan struct{})
		acked1 := make(chan struct{})
		opens := make(chan time.Duration, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			first := true
			for sc.Scan() {
				if n, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
					op, _ := strconv.Atoi(n)
					acks <- op
					if first {
						first = false
						close(acked1)
					}
				} else if ns, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
					d, _ := strconv.ParseInt(ns, 10, 64)
					opens <- time.Duration(d)
					close(ready)
				} else {
					lines <- sc.Text()
				}
			}
			close(acks)
		}()
		// Kill at a random moment: one time in ten while the child starts
		// up and recovers (process start-up time varies a lot under
		// -race), otherwise in the middle of its stream of commits, once
		// it has acknowledged one (however slow the machine).
		if rng.IntN(10) == 0 {
			time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		} else {
			for _, step := range []struct {
				done <-chan struct{}
				what string
			}{{ready, "did not start"}, {acked1, "acknowledged no commit"}} {
				select {
				case <-step.done:
				case l := <-lines:
					t.Fatalf("child failed: %s", l)
				case <-time.After(60 * time.Second):
					t.Fatalf("child %s within a minute", step.what)
				}
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
		select {
		case d := <-opens:
			recovery = append(recovery, d)
		default: // killed before its Open returned
		}
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
	require.Positive(t, acked, "children made progress")
	slices.Sort(recovery)
	rows := 0
	for _, m := range model {
		rows += len(m)
	}
	t.Logf("%d kills, %d acknowledged statements, %d committed but unacknowledged when killed; %d rows at the end; restart (a child's Open: replay and end-of-recovery checkpoint) median %v, max %v",
		kills, acked, inflight, rows, recovery[len(recovery)/2], recovery[len(recovery)-1])
}
