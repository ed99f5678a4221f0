package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// The manifest is the single source of truth of a data directory: the tables
// and, for each, the segment files that hold its rows in insertion order. A
// commit writes a complete new manifest to manifestTmp, fsyncs it, renames it
// over manifestName and fsyncs the directory; rename is atomic, so a crash
// leaves either the old or the new manifest, never a mix.
const (
	manifestName   = "manifest.json"
	manifestTmp    = "manifest.json.tmp"
	lockName       = "LOCK"
	manifestFormat = 2
)

type manifest struct {
	Format      int    `json:"format"`
	NextSegment uint64 `json:"next_segment"`
	NextOrder   uint64 `json:"next_order"`
	NextTable   uint64 `json:"next_table"`
	// Checkpoint is the LSN of the last log record the manifest reflects;
	// recovery replays the records after it.
	Checkpoint uint64     `json:"checkpoint,omitempty"`
	Tables     []mTable   `json:"tables"`
	Views      []*ViewDef `json:"views,omitempty"`
}

type mTable struct {
	ID       uint64     `json:"id"`
	Name     string     `json:"name"`
	Columns  []mColumn  `json:"columns"`
	OrderBy  []string   `json:"order_by,omitempty"`
	NextCol  uint32     `json:"next_column,omitempty"`
	Segments []mSegment `json:"segments,omitempty"`
}

type mColumn struct {
	ID      uint32  `json:"id,omitempty"`
	Name    string  `json:"name"`
	Type    string  `json:"type"`
	NotNull bool    `json:"not_null,omitempty"`
	Default *string `json:"default,omitempty"`
}

type mSegment struct {
	ID       uint64  `json:"id"`
	Order    uint64  `json:"order"`
	Rows     int64   `json:"rows"`
	Min      *mValue `json:"min,omitempty"`
	Max      *mValue `json:"max,omitempty"`
	KeyNulls *int64  `json:"key_nulls,omitempty"`
	// Columns are the ids of the stored columns (absent: the table's
	// columns of format 1, which had no ALTER TABLE).
	Columns []uint32 `json:"columns,omitempty"`
	// Deleted are the deletion mask's [from, to) position ranges.
	Deleted [][2]int64 `json:"deleted,omitempty"`
}

// mValue is a canonical key value (see valueAt) in JSON. Floats are text so
// NaN and infinities survive; decimals are their two 64-bit halves.
type mValue struct {
	B *bool    `json:"b,omitempty"`
	I *int64   `json:"i,omitempty"`
	F string   `json:"f,omitempty"`
	N []string `json:"n,omitempty"`
	S *string  `json:"s,omitempty"`
	X *[]byte  `json:"x,omitempty"`
}

func encodeValue(v any) *mValue {
	switch v := v.(type) {
	case nil:
		return nil
	case bool:
		return &mValue{B: &v}
	case int64:
		return &mValue{I: &v}
	case float64:
		return &mValue{F: strconv.FormatFloat(v, 'g', -1, 64)}
	case decimal128.Num:
		return &mValue{N: []string{strconv.FormatInt(v.HighBits(), 10), strconv.FormatUint(v.LowBits(), 10)}}
	case string:
		return &mValue{S: &v}
	case []byte:
		return &mValue{X: &v}
	}
	panic(fmt.Sprintf("catalog: encodeValue: %T", v))
}

func decodeValue(m *mValue) (any, error) {
	switch {
	case m == nil:
		return nil, nil
	case m.B != nil:
		return *m.B, nil
	case m.I != nil:
		return *m.I, nil
	case m.F != "":
		f, err := strconv.ParseFloat(m.F, 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, err
		}
		return f, nil
	case len(m.N) == 2:
		hi, err := strconv.ParseInt(m.N[0], 10, 64)
		if err != nil {
			return nil, err
		}
		lo, err := strconv.ParseUint(m.N[1], 10, 64)
		if err != nil {
			return nil, err
		}
		return decimal128.New(hi, lo), nil
	case m.S != nil:
		return *m.S, nil
	case m.X != nil:
		return *m.X, nil
	}
	return nil, errors.New("empty value")
}

// readManifest loads dir's manifest; a missing one is an empty catalog.
func readManifest(dir string) (*manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, os.ErrNotExist) {
		return &manifest{Format: manifestFormat}, nil
	}
	if err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.IOError, "could not read catalog manifest: %v", err)
	}
	m := &manifest{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.DataCorrupted, "catalog manifest %s is corrupt: %v", filepath.Join(dir, manifestName), err)
	}
	if m.Format != manifestFormat && m.Format != 1 {
		return nil, sqlerr.New(sqlerr.DataCorrupted, "catalog manifest %s has format %d; this build reads format %d", filepath.Join(dir, manifestName), m.Format, manifestFormat)
	}
	return m, nil
}

// writeManifest atomically replaces dir's manifest with m.
func writeManifest(dir string, m *manifest) error {
	data, err := json.Marshal(m)
	if err != nil {
		return sqlerr.Wrap(err, sqlerr.InternalError, "could not encode catalog manifest: %v", err)
	}
	tmp := filepath.Join(dir, manifestTmp)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return sqlerr.Wrap(err, sqlerr.IOError, "could not write catalog manifest: %v", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, manifestName))
	}
	if err != nil {
		os.Remove(tmp)
		return sqlerr.Wrap(err, sqlerr.IOError, "could not write catalog manifest: %v", err)
	}
	return nil
}

// syncDir makes the directory's entries (created, renamed files) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return sqlerr.Wrap(err, sqlerr.IOError, "could not sync data directory: %v", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sqlerr.Wrap(err, sqlerr.IOError, "could not sync data directory: %v", err)
	}
	return nil
}

// toManifest renders a state's tables, leaving out append segments (the
// log holds their rows); counters come from the catalog.
func (c *Catalog) toManifest(st *state, checkpoint uint64) *manifest {
	m := &manifest{
		Format:      manifestFormat,
		NextSegment: c.nextSegID.Load(),
		NextOrder:   c.nextOrder.Load(),
		NextTable:   c.nextTable.Load(),
		Checkpoint:  checkpoint,
	}
	for _, name := range st.names() {
		ts := st.tables[name]
		mt := tableToManifest(ts.meta)
		for _, r := range ts.segs {
			if r.s.app != nil {
				continue
			}
			ms := segmentToManifest(r.s)
			for _, x := range r.del.within(0, r.n) {
				ms.Deleted = append(ms.Deleted, [2]int64{x.lo, x.hi})
			}
			mt.Segments = append(mt.Segments, ms)
		}
		m.Tables = append(m.Tables, mt)
	}
	for _, name := range slices.Sorted(maps.Keys(st.views)) {
		m.Views = append(m.Views, st.views[name])
	}
	return m
}

func tableToManifest(meta *tableMeta) mTable {
	mt := mTable{ID: meta.id, Name: meta.def.Name, OrderBy: meta.def.OrderBy, NextCol: meta.nextCol}
	for i, col := range meta.def.Columns {
		mt.Columns = append(mt.Columns, mColumn{ID: meta.colIDs[i], Name: col.Name, Type: col.Type.String(), NotNull: col.NotNull, Default: col.Default})
	}
	return mt
}

func segmentToManifest(s *segment) mSegment {
	st := s.stats
	ms := mSegment{ID: s.id, Order: s.order, Rows: st.rows, Min: encodeValue(st.min), Max: encodeValue(st.max), Columns: s.cols}
	if st.keyNulls >= 0 {
		kn := st.keyNulls
		ms.KeyNulls = &kn
	}
	return ms
}

func segmentsToManifest(segs []*segment) []mSegment {
	out := make([]mSegment, len(segs))
	for i, s := range segs {
		out[i] = segmentToManifest(s)
	}
	return out
}

// tableFromManifest rebuilds a table definition.
func tableFromManifest(mt *mTable) (*tableMeta, error) {
	def := TableDef{Name: mt.Name, OrderBy: mt.OrderBy}
	ids := make([]uint32, len(mt.Columns))
	for i, mc := range mt.Columns {
		t, err := sqltypes.ParseTypeName(mc.Type)
		if err != nil {
			return nil, sqlerr.Wrap(err, sqlerr.DataCorrupted, "catalog manifest: column %q of table %q: %v", mc.Name, mt.Name, err)
		}
		def.Columns = append(def.Columns, Column{Name: mc.Name, Type: t, NotNull: mc.NotNull, Default: mc.Default})
		ids[i] = mc.ID
		if ids[i] == 0 {
			ids[i] = uint32(i + 1) // format 1
		}
	}
	next := mt.NextCol
	if next == 0 {
		next = uint32(len(ids) + 1)
	}
	meta, err := newTableMetaIDs(mt.ID, def, ids, next)
	if err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.DataCorrupted, "catalog manifest: table %q: %v", mt.Name, err)
	}
	return meta, nil
}

// segmentFromManifest describes a segment file, checking it exists. The
// segment holds one reference, for the caller.
func (c *Catalog) segmentFromManifest(meta *tableMeta, ms *mSegment) (*segment, *delMask, error) {
	s := &segment{c: c, id: ms.ID, order: ms.Order, cols: ms.Columns, path: segmentPath(c.dir, ms.ID),
		stats: &segStats{rows: ms.Rows, keyNulls: -1}}
	s.refs.Store(1)
	if s.cols == nil {
		s.cols = meta.colIDs
	}
	if ms.KeyNulls != nil {
		s.stats.keyNulls = *ms.KeyNulls
	}
	var err error
	if s.stats.min, err = decodeValue(ms.Min); err == nil {
		s.stats.max, err = decodeValue(ms.Max)
	}
	if err != nil {
		return nil, nil, sqlerr.Wrap(err, sqlerr.DataCorrupted, "catalog manifest: segment %d of table %q: bad statistics: %v", ms.ID, meta.def.Name, err)
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return nil, nil, sqlerr.Wrap(err, sqlerr.DataCorrupted, "segment file of table %q is missing: %v", meta.def.Name, err)
	}
	s.stats.bytes = fi.Size()
	var rs []posRange
	for _, d := range ms.Deleted {
		rs = append(rs, posRange{d[0], d[1]})
	}
	return s, maskFromRanges(rs), nil
}

// fromManifest rebuilds the tables of a manifest, checking every segment
// file exists. The segments' creator references go to created.
func (c *Catalog) fromManifest(m *manifest, created *[]*segment) (map[string]*tableState, map[string]*ViewDef, error) {
	tables := make(map[string]*tableState, len(m.Tables))
	for _, mt := range m.Tables {
		meta, err := tableFromManifest(&mt)
		if err != nil {
			return nil, nil, err
		}
		ts := &tableState{meta: meta}
		for _, ms := range mt.Segments {
			s, del, err := c.segmentFromManifest(meta, &ms)
			if err != nil {
				return nil, nil, err
			}
			*created = append(*created, s)
			ts.segs = append(ts.segs, segRef{s: s, n: s.stats.rows, del: del, st: s.stats})
		}
		tables[mt.Name] = ts
	}
	views := map[string]*ViewDef{}
	for _, v := range m.Views {
		views[v.Name] = v
	}
	return tables, views, nil
}

// collectGarbage deletes files in dir that the manifest does not reference:
// segments written by statements or compactions that never committed, and
// segments whose deletion a crash interrupted.
func collectGarbage(dir string, tables map[string]*tableState) error {
	live := map[string]bool{}
	for _, ts := range tables {
		for _, s := range ts.segs {
			if s.s.path != "" {
				live[filepath.Base(s.s.path)] = true
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return sqlerr.Wrap(err, sqlerr.IOError, "could not list data directory: %v", err)
	}
	for _, e := range entries {
		name := e.Name()
		orphan := name == manifestTmp || (strings.HasPrefix(name, "seg-") && strings.HasSuffix(name, ".arrow") && !live[name])
		if orphan {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return sqlerr.Wrap(err, sqlerr.IOError, "could not remove orphan file: %v", err)
			}
		}
	}
	return nil
}
