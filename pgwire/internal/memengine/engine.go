package memengine

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Engine holds the tables. It is safe for concurrent use.
type Engine struct {
	// Produced counts generate_series batches made, so tests can see how
	// far a query ran ahead of its client.
	Produced atomic.Int64

	mem    memory.Allocator
	mu     sync.Mutex
	tables map[string]*table
	nextID uint32
}

type table struct {
	name    string
	oid     uint32
	schema  *arrow.Schema
	types   []sqltypes.Type
	batches []arrow.RecordBatch
}

// New returns an empty engine allocating from mem.
func New(mem memory.Allocator) *Engine {
	return &Engine{mem: mem, tables: map[string]*table{}, nextID: 16384}
}

// Allocator returns the engine's allocator.
func (e *Engine) Allocator() memory.Allocator { return e.mem }

// AddTable registers a table; the engine takes ownership of the batches.
func (e *Engine) AddTable(name string, schema *arrow.Schema, batches ...arrow.RecordBatch) error {
	types := make([]sqltypes.Type, schema.NumFields())
	for i, f := range schema.Fields() {
		t, err := sqltypes.FromField(f)
		if err != nil {
			return err
		}
		types[i] = t
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.tables[name]; ok {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
	}
	e.nextID++
	e.tables[name] = &table{name: name, oid: e.nextID, schema: schema, types: types, batches: batches}
	return nil
}

// Rows returns the number of committed rows of a table.
func (e *Engine) Rows(name string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tables[name]
	if t == nil {
		return -1
	}
	var n int64
	for _, b := range t.batches {
		n += b.NumRows()
	}
	return n
}

// Release frees every table's batches.
func (e *Engine) Release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range e.tables {
		for _, b := range t.batches {
			b.Release()
		}
	}
	e.tables = map[string]*table{}
}

// snapshot returns a table with its batches retained; the caller releases.
func (e *Engine) snapshot(name string) (*table, []arrow.RecordBatch) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tables[name]
	if t == nil {
		return nil, nil
	}
	out := make([]arrow.RecordBatch, len(t.batches))
	for i, b := range t.batches {
		b.Retain()
		out[i] = b
	}
	return t, out
}

func (e *Engine) publish(name string, batches []arrow.RecordBatch) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tables[name]
	if t == nil {
		for _, b := range batches {
			b.Release()
		}
		return
	}
	t.batches = append(t.batches, batches...)
}

// settings the sessions know, with their defaults; keys are lower case.
var defaultSettings = map[string]string{
	"application_name":              "",
	"client_encoding":               "UTF8",
	"datestyle":                     "ISO, MDY",
	"intervalstyle":                 "postgres",
	"timezone":                      "UTC",
	"extra_float_digits":            "1",
	"standard_conforming_strings":   "on",
	"is_superuser":                  "on",
	"default_transaction_read_only": "off",
	"search_path":                   `"$user", public`,
	"statement_timeout":             "0",
	"transaction_isolation":         "read committed",
	// Enforced by the server while the session is idle.
	"idle_session_timeout":                "0",
	"idle_in_transaction_session_timeout": "0",
}

// displayName maps lower-case keys to Postgres' spelling for SHOW.
var displayName = map[string]string{"datestyle": "DateStyle", "intervalstyle": "IntervalStyle", "timezone": "TimeZone"}

// Connect implements pgwire.Engine.
func (e *Engine) Connect(ctx context.Context, info pgwire.StartupInfo) (pgwire.Session, error) {
	s := &session{e: e, info: info, settings: map[string]string{}, opts: sqltypes.DefaultOptions(), tx: 'I'}
	for k, v := range defaultSettings {
		s.settings[k] = v
	}
	s.settings["session_authorization"] = info.User
	for k, v := range info.Options {
		if k == "options" {
			continue // command-line switches: none supported, none refused
		}
		if err := s.set(strings.ToLower(k), v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

type staged struct {
	table   string
	batches []arrow.RecordBatch
}

type session struct {
	e        *Engine
	info     pgwire.StartupInfo
	settings map[string]string
	opts     *sqltypes.Options
	tx       byte // 'I', 'T' or 'E'
	pending  []staged
}

func (s *session) set(name, value string) error {
	if _, ok := defaultSettings[name]; !ok || name == "is_superuser" {
		return sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	switch name {
	case "client_encoding":
		if v := strings.ToUpper(strings.ReplaceAll(value, "-", "")); v != "UTF8" && v != "UNICODE" {
			return sqlerr.New(sqlerr.FeatureNotSupported, "client encoding %q is not supported", value)
		}
		value = "UTF8"
	case "datestyle":
		if !strings.HasPrefix(strings.ToUpper(value), "ISO") {
			return sqlerr.New(sqlerr.FeatureNotSupported, "DateStyle %q is not supported", value)
		}
		value = "ISO, MDY"
	case "intervalstyle":
		if value != "postgres" {
			return sqlerr.New(sqlerr.FeatureNotSupported, "IntervalStyle %q is not supported", value)
		}
	case "timezone":
		loc, err := time.LoadLocation(value)
		if err != nil {
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": %q", value)
		}
		s.opts.Location = loc
	case "extra_float_digits":
		n, err := strconv.Atoi(value)
		if err != nil {
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"extra_float_digits\": %q", value)
		}
		if n < -15 || n > 3 {
			return sqlerr.New(sqlerr.InvalidParameterValue, "%d is outside the valid range for parameter \"extra_float_digits\" (-15 .. 3)", n)
		}
		s.opts.ExtraFloatDigits = n
	case "statement_timeout", "idle_session_timeout", "idle_in_transaction_session_timeout":
		if _, ok := pgwire.ParseDuration(value); !ok {
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": %q", name, value)
		}
	case "standard_conforming_strings":
		if value != "on" {
			return sqlerr.New(sqlerr.FeatureNotSupported, "standard_conforming_strings must be on")
		}
	}
	s.settings[name] = value
	return nil
}

// Setting implements pgwire.Session.
func (s *session) Setting(name string) (string, bool) {
	v, ok := s.settings[strings.ToLower(name)]
	return v, ok
}

func (s *session) ValueOptions() *sqltypes.Options { return s.opts }
func (s *session) TxStatus() byte                  { return s.tx }

func (s *session) Sync(ctx context.Context, failed bool) error {
	switch s.tx {
	case 'I':
		if failed {
			s.discard()
		} else {
			s.commit()
		}
	case 'T':
		if failed {
			s.tx = 'E'
		}
	}
	return nil
}

func (s *session) commit() {
	for _, p := range s.pending {
		s.e.publish(p.table, p.batches)
	}
	s.pending = nil
}

func (s *session) discard() {
	for _, p := range s.pending {
		for _, b := range p.batches {
			b.Release()
		}
	}
	s.pending = nil
}

func (s *session) Close() error {
	s.discard()
	return nil
}

func (s *session) notice(e *sqlerr.Error) {
	if s.info.Notice != nil {
		s.info.Notice(e)
	}
}

func errorf(code, format string, args ...any) *sqlerr.Error {
	return sqlerr.New(code, format, args...)
}

// Compile-time checks of the interfaces the server drives.
var (
	_ pgwire.Engine        = (*Engine)(nil)
	_ pgwire.Session       = (*session)(nil)
	_ pgwire.Batch         = (*batch)(nil)
	_ pgwire.Statement     = (*stmt)(nil)
	_ pgwire.Result        = (*rowsResult)(nil)
	_ pgwire.CopyInResult  = (*copyIn)(nil)
	_ pgwire.CopyOutResult = (*copyOut)(nil)
)
