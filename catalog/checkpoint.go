package catalog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/asofsql/asofsql/sqlerr"
)

// errBusy: a checkpoint or compaction found row-removing transactions in
// flight and will be retried.
var errBusy = errors.New("catalog busy with DML")

// recover loads the manifest, replays the log after its checkpoint,
// deletes orphan files and opens a new log file.
func (c *Catalog) recover() (*state, error) {
	m, err := readManifest(c.dir)
	if err != nil {
		return nil, err
	}
	c.nextSegID.Store(m.NextSegment)
	c.nextOrder.Store(m.NextOrder)
	c.nextTable.Store(m.NextTable)
	c.ckptLSN.Store(m.Checkpoint)
	b := &builder{c: c, replay: true}
	b.tables, b.views, err = c.fromManifest(m, &b.created)
	if err != nil {
		b.releaseCreated()
		return nil, err
	}
	next, err := readWAL(c.dir, m.Checkpoint, func(lsn uint64, payload []byte) error {
		if err := b.replayRecord(payload); err != nil {
			return sqlerr.Wrap(err, sqlerr.DataCorrupted, "log record %d cannot be replayed: %v", lsn, err)
		}
		return nil
	})
	if err != nil {
		b.releaseCreated()
		return nil, err
	}
	// Append segments rebuilt by replay take no more appends: the next
	// commit starts a new one, after every replayed segment in order.
	for name, ts := range b.tables {
		if ts.open != nil {
			b.tables[name] = &tableState{meta: ts.meta, segs: ts.segs}
		}
	}
	st := newState(b.tables, b.views)
	b.releaseCreated()
	st.lsn = next - 1
	// Orphan files (uncommitted statements, unlogged compactions) may
	// carry ids past the counters: new files must not collide with them
	// before garbage collection.
	if entries, err := os.ReadDir(c.dir); err == nil {
		for _, e := range entries {
			var id uint64
			if _, err := fmt.Sscanf(e.Name(), "seg-%x.arrow", &id); err == nil {
				bumpTo(&c.nextSegID, id)
			}
		}
	}
	c.replayed = next-1 > m.Checkpoint
	if !c.replayed {
		// The manifest is the whole state: any other file is garbage.
		// (After a replay, files the manifest or the log still name may
		// be needed by another replay until the end-of-recovery
		// checkpoint; Open collects garbage after it.)
		if err := collectGarbage(c.dir, st.tables); err != nil {
			st.release()
			return nil, err
		}
	}
	c.wal, err = openWAL(c.dir, next, c.opts.LogPreallocate, c.publish)
	if err != nil {
		st.release()
		return nil, err
	}
	return st, nil
}

// Checkpoint writes the rows held in memory (append segments) out as
// ordinary sorted segment files, records the result in a new manifest and
// deletes the log files it covers. It runs in the background on its own
// (Options.CheckpointBytes, CheckpointRows) and at Close; commits go on
// while it writes. It waits for transactions that delete or alter rows to
// finish. In memory it does nothing.
func (c *Catalog) Checkpoint(ctx context.Context) error {
	for {
		err := c.checkpoint(ctx, true)
		if err != errBusy {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// checkpoint runs one checkpoint; errBusy when DML is in flight.
//
//  1. Under the commit lock: seal every append segment (later commits
//     start new ones) and start a new log file; L is the last record
//     of the old files.
//  2. Without locks: write each sealed segment's rows (as of the head
//     state; no deletion can commit meanwhile, dmlMu) sorted into a file.
//  3. Under the commit lock: swap the files in for the append segments,
//     write the manifest with checkpoint L, publish.
//  4. Delete the log files before L and retired segment files whose
//     removal L covers.
//
// The manifest lists the state as of step 3 less its append segments; the
// records after L rebuild those (they were all created after L), and the
// other records after L are already in the manifest and are skipped on
// replay (see logrec.go).
func (c *Catalog) checkpoint(ctx context.Context, force bool) error {
	if c.wal == nil {
		return nil
	}
	c.maintMu.Lock()
	defer c.maintMu.Unlock()
	if !force && !c.needCheckpoint() {
		return nil
	}
	if !c.dmlMu.TryLock() {
		return errBusy
	}
	defer c.dmlMu.Unlock()

	c.commitMu.Lock()
	if c.head == nil || c.broken != nil {
		c.commitMu.Unlock()
		return c.broken
	}
	// Everything committed so far is flushed (and so published) before the
	// sealed state replaces it.
	first, err := c.wal.rotate()
	if err != nil {
		c.commitMu.Unlock()
		return err
	}
	type job struct {
		name string
		meta *tableMeta
		ref  segRef
		out  *segment
	}
	var jobs []*job
	tables := maps.Clone(c.head.tables)
	for name, ts := range tables {
		for _, r := range ts.segs {
			if r.s.app != nil {
				r.s.app.mu.Lock()
				r.s.app.sealed = true
				r.s.app.mu.Unlock()
				jobs = append(jobs, &job{name: name, meta: ts.meta, ref: r})
			}
		}
		if ts.open != nil {
			tables[name] = &tableState{meta: ts.meta, segs: ts.segs}
		}
	}
	head := newState(tables, c.head.views)
	head.lsn = c.head.lsn
	c.swapHead(head)
	ckpt := first - 1
	c.commitMu.Unlock()
	c.memRows.Store(0)

	discardOuts := func() {
		for _, j := range jobs {
			if j.out != nil {
				discard([]*segment{j.out})
				j.out = nil
			}
		}
	}
	for _, j := range jobs {
		if j.ref.live() == 0 {
			continue
		}
		out, err := c.mergeSegments(ctx, j.meta, []segRef{j.ref})
		if err != nil {
			discardOuts()
			return err
		}
		j.out = out
	}

	c.commitMu.Lock()
	if c.head == nil {
		c.commitMu.Unlock()
		discardOuts()
		return errClosed()
	}
	// Everything before the swap must be published, so the manifest never
	// describes a state snapshots have not seen.
	if err := c.wal.flush(c.wal.last()); err != nil {
		c.commitMu.Unlock()
		discardOuts()
		return err
	}
	tables = maps.Clone(c.head.tables)
	for _, j := range jobs {
		_, ts := (&builder{tables: tables}).byID(j.meta.id)
		if ts == nil {
			continue
		}
		segs := make([]segRef, 0, len(ts.segs))
		for _, r := range ts.segs {
			if r.s != j.ref.s {
				segs = append(segs, r)
			} else if j.out != nil {
				segs = append(segs, refOf(j.out))
			}
		}
		tables[ts.meta.def.Name] = &tableState{meta: ts.meta, segs: segs, open: ts.open}
	}
	next := newState(tables, c.head.views)
	next.lsn = c.head.lsn
	if err := writeManifest(c.dir, c.toManifest(next, ckpt)); err == nil {
		err = syncDir(c.dir)
		if err != nil {
			c.broken = sqlerr.Wrap(err, sqlerr.IOError, "catalog stopped after a failed directory sync; reopen it: %v", err)
		}
	}
	if err != nil {
		c.commitMu.Unlock()
		next.release()
		discardOuts()
		return err
	}
	c.swapHead(next)
	c.commitMu.Unlock()
	for _, j := range jobs {
		if j.out != nil {
			j.out.release() // the state holds its own reference
		}
	}
	c.ckptLSN.Store(ckpt)
	c.checkpoints.Add(1)
	c.wal.removeBefore(first)
	c.defMu.Lock()
	keep := c.deferred[:0]
	for _, s := range c.deferred {
		if s.goneLSN.Load() <= ckpt {
			_ = os.Remove(s.path)
		} else {
			keep = append(keep, s)
		}
	}
	c.deferred = keep
	c.defMu.Unlock()
	return nil
}

// swapHead installs a state that changes no row (sealing, checkpoint,
// compaction output swapped in for its inputs) as head and, everything
// before it being published, as the published state. Called with the
// commit lock held and nothing pending.
func (c *Catalog) swapHead(next *state) {
	old := c.head
	c.head = next
	c.retire(old, next)
	// Memory of replaced append segments goes with their last reader.
	next.retain()
	c.mu.Lock()
	for _, p := range c.pending {
		p.release()
	}
	c.pending = c.pending[:0]
	c.cur.release()
	c.cur = next
	c.mu.Unlock()
	old.release()
}
