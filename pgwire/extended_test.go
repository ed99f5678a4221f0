package pgwire_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/asofsql/asofsql/pgwire"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// ext sends messages followed by Sync and returns the replies.
func (r *raw) ext(msgs ...pgproto3.FrontendMessage) []string {
	r.t.Helper()
	r.send(append(msgs, &pgproto3.Sync{})...)
	return r.untilReady()
}

func TestExtendedProtocol(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	steps := []struct {
		name string
		msgs []pgproto3.FrontendMessage
		want []string
	}{
		{"parse and describe named", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "s1", Query: "select $1::int4 as id, $2 as name"},
			&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		}, []string{"1", "t [23 0]", "T id:23/4/-1/0 name:25/-1/-1/0", "Z I"}},
		{"bind mixed formats, describe portal, MaxRows", []pgproto3.FrontendMessage{
			&pgproto3.Bind{DestinationPortal: "p1", PreparedStatement: "s1", ParameterFormatCodes: []int16{1, 0},
				Parameters: [][]byte{{0, 0, 0, 7}, []byte("hello")}, ResultFormatCodes: []int16{1, 0}},
			&pgproto3.Describe{ObjectType: 'P', Name: "p1"},
			&pgproto3.Execute{Portal: "p1", MaxRows: 1},
			&pgproto3.Execute{Portal: "p1", MaxRows: 1},
			&pgproto3.Execute{Portal: "p1", MaxRows: 1},
			&pgproto3.Close{ObjectType: 'P', Name: "p1"},
		}, []string{"2", "T id:23/4/-1/1 name:25/-1/-1/0", "D \\x00000007|hello", "s", "C SELECT 0", "C SELECT 0", "3", "Z I"}},
		{"MaxRows over a table", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "all", Query: "select * from t"},
			&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "all", ResultFormatCodes: []int16{1, 0, 0, 0}},
			&pgproto3.Execute{Portal: "p", MaxRows: 2},
			&pgproto3.Execute{Portal: "p", MaxRows: 2},
			&pgproto3.Execute{Portal: "p", MaxRows: 2},
		}, []string{"1", "2", "D \\x00000001|a|1.50|2024-01-02 03:04:05.123456+00", "D \\x00000002|b|-2.25|2024-01-02 03:04:06+00", "s",
			"D \\x00000003|c|NULL|2024-07-01 00:00:00+00", "C SELECT 1", "C SELECT 0", "Z I"}},
		{"named portal dies at Sync outside a transaction", []pgproto3.FrontendMessage{
			&pgproto3.Execute{Portal: "p", MaxRows: 1},
		}, []string{`E ERROR 34000 portal "p" does not exist`, "Z I"}},
		{"Flush sends without ReadyForQuery", nil, nil},
		{"error in Bind skips to Sync", []pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("abc"), []byte("x")}},
			&pgproto3.Execute{},
			&pgproto3.Parse{Name: "never", Query: "select 1"},
		}, []string{`E ERROR 22P02 invalid input syntax for type integer: "abc"`, "Z I"}},
		{"skipped Parse did not happen", []pgproto3.FrontendMessage{
			&pgproto3.Describe{ObjectType: 'S', Name: "never"},
		}, []string{`E ERROR 26000 prepared statement "never" does not exist`, "Z I"}},
		{"wrong parameter count", []pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("1")}},
		}, []string{`E ERROR 08P01 bind message supplies 1 parameters, but prepared statement "s1" requires 2`, "Z I"}},
		{"bad result format count", []pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("1"), nil}, ResultFormatCodes: []int16{0, 0, 0}},
		}, []string{`E ERROR 08P01 bind message has 3 result formats but query has 2 columns`, "Z I"}},
		{"bad format code", []pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("1"), nil}, ResultFormatCodes: []int16{7}},
		}, []string{`E ERROR 22023 unsupported format code: 7`, "Z I"}},
		{"short binary parameter", []pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "s1", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 1}, []byte("x")}},
		}, []string{`E ERROR 08P01 insufficient data left in message`, "Z I"}},
		{"long binary parameter", []pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "s1", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 0, 1}, []byte("x")}},
		}, []string{`E ERROR 22P03 incorrect binary data format in bind parameter 1`, "Z I"}},
		{"duplicate statement", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "s1", Query: "select 1"},
		}, []string{`E ERROR 42P05 prepared statement "s1" already exists`, "Z I"}},
		{"multiple statements", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "select 1; select 2"},
		}, []string{`E ERROR 42601 cannot insert multiple commands into a prepared statement`, "Z I"}},
		{"empty query", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: ""},
			&pgproto3.Bind{},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{},
		}, []string{"1", "2", "n", "I", "Z I"}},
		{"unknown statement and portal; Close of unknown is fine", []pgproto3.FrontendMessage{
			&pgproto3.Describe{ObjectType: 'S', Name: "nope"},
		}, []string{`E ERROR 26000 prepared statement "nope" does not exist`, "Z I"}},
		{"unknown portal", []pgproto3.FrontendMessage{
			&pgproto3.Execute{Portal: "nope"},
		}, []string{`E ERROR 34000 portal "nope" does not exist`, "Z I"}},
		{"close unknown", []pgproto3.FrontendMessage{
			&pgproto3.Close{ObjectType: 'S', Name: "nope"},
			&pgproto3.Close{ObjectType: 'P', Name: "nope"},
		}, []string{"3", "3", "Z I"}},
		{"SET via extended with MaxRows", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "set application_name='y'"},
			&pgproto3.Bind{},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{MaxRows: 1},
		}, []string{"1", "2", "n", "C SET", "S application_name=y", "Z I"}},
		{"BEGIN then error gives E", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "begin"}, &pgproto3.Bind{}, &pgproto3.Execute{},
			&pgproto3.Parse{Query: "select fail('zero')"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		}, []string{"1", "2", "C BEGIN", "1", "2", "E ERROR 22012 zero D=raised by fail() H=do not call fail() P=8", "Z E"}},
		{"failed block refuses statements", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "select 1"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		}, []string{"E ERROR 25P02 current transaction is aborted, commands ignored until end of transaction block", "Z E"}},
		{"rollback", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "rollback"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		}, []string{"1", "2", "C ROLLBACK", "Z I"}},
		{"portals survive Sync inside a transaction", []pgproto3.FrontendMessage{
			&pgproto3.Query{String: "begin"},
		}, nil},
		{"declared parameter types", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "typed", Query: "select $1, $2::int8", ParameterOIDs: []uint32{1184, 23}},
			&pgproto3.Describe{ObjectType: 'S', Name: "typed"},
			&pgproto3.Bind{DestinationPortal: "cur", PreparedStatement: "typed", ParameterFormatCodes: []int16{0, 1},
				Parameters: [][]byte{[]byte("2024-01-02 03:04:05+02"), {0, 0, 0, 9}}},
			&pgproto3.Execute{Portal: "cur", MaxRows: 1},
		}, []string{"1", "t [1184 23]", "T ?column?:1184/8/-1/0 int8:20/8/-1/0", "2", "D 2024-01-02 01:04:05+00|9", "s", "Z T"}},
		{"inside the block the portal lives on", []pgproto3.FrontendMessage{
			&pgproto3.Execute{Portal: "cur", MaxRows: 1},
		}, []string{"C SELECT 0", "Z T"}},
		{"commit", []pgproto3.FrontendMessage{&pgproto3.Query{String: "commit"}}, nil},
		{"unnamed statement replaced", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "select 1"},
			&pgproto3.Parse{Query: "select 'two'"},
			&pgproto3.Bind{}, &pgproto3.Execute{},
		}, []string{"1", "1", "2", "D two", "C SELECT 1", "Z I"}},
		{"a simple Query destroys the unnamed statement", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "select 'unnamed'"},
			&pgproto3.Query{String: "select 1"},
		}, nil},
		{"so Bind finds none", []pgproto3.FrontendMessage{&pgproto3.Bind{}},
			[]string{`E ERROR 26000 unnamed prepared statement does not exist`, "Z I"}},
		{"closing a statement closes its portals", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "tmp", Query: "select 1"},
			&pgproto3.Bind{DestinationPortal: "tp", PreparedStatement: "tmp"},
			&pgproto3.Close{ObjectType: 'S', Name: "tmp"},
			&pgproto3.Execute{Portal: "tp"},
		}, []string{"1", "2", "3", `E ERROR 34000 portal "tp" does not exist`, "Z I"}},
	}
	for _, s := range steps {
		switch s.name {
		case "Flush sends without ReadyForQuery":
			r.send(&pgproto3.Parse{Name: "s2", Query: "select 42"}, &pgproto3.Bind{PreparedStatement: "s2"},
				&pgproto3.Execute{}, &pgproto3.Flush{})
			require.Equal(t, []string{"1", "2", "D 42", "C SELECT 1"}, r.recvN(4))
			require.Equal(t, []string{"Z I"}, r.ext())
			continue
		case "a simple Query destroys the unnamed statement":
			r.send(s.msgs...)
			require.Equal(t, []string{"1", "T ?column?:23/4/-1/0", "D 1", "C SELECT 1", "Z I"}, r.untilReady())
			continue
		case "portals survive Sync inside a transaction", "commit":
			r.send(s.msgs...)
			r.untilReady()
			continue
		}
		require.Equal(t, s.want, r.ext(s.msgs...), s.name)
	}
}

// TestBinaryResults checks binary encodings against bytes captured from
// PostgreSQL 15.
func TestBinaryResults(t *testing.T) {
	h := start(t, nil)
	r, _ := connect(t, h.addr, nil)
	got := r.ext(
		&pgproto3.Parse{Query: "select true::bool, 1::int2, -2::int4, 3::int8, 1.5::float4, -2.25::float8, 12.340::numeric(10,3), '-0.0001'::numeric(10,4), 'héllo'::text, '\\xdeadbeef'::bytea, '2024-01-02'::date, '1999-12-31 23:59:59.5'::timestamp, '2024-01-02 03:04:05.123456+02'::timestamptz, 'infinity'::timestamp, '1 year 2 mons 3 days 04:05:06.5'::interval, '-1 day'::interval, null::int4"},
		&pgproto3.Bind{ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{},
	)
	require.Equal(t, []string{"1", "2",
		"D \\x01|\\x0001|\\xfffffffe|\\x0000000000000003|\\x3fc00000|\\xc002000000000000|\\x0002000000000003000c0d48|\\x0001ffff400000040001|\\x68c3a96c6c6f|\\xdeadbeef|\\x0000223f|\\xfffffffffff85ee0|\\x0002b0ead7f08d80|\\x7fffffffffffffff|\\x000000036c9361a0000000030000000e|\\x0000000000000000ffffffff00000000|NULL",
		"C SELECT 1", "Z I"}, got)
	// Binary parameters, text results (capture "types: binary params").
	got = r.ext(
		&pgproto3.Parse{Query: "select $1::int4, $2::float8, $3::bool, $4::timestamptz, $5::numeric", ParameterOIDs: []uint32{23, 701, 16, 1184, 1700}},
		&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{
			{0, 0, 0, 7}, {0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18}, {1}, {0, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0, 0, 5}}},
		&pgproto3.Execute{},
	)
	require.Equal(t, []string{"1", "2", "D 7|3.141592653589793|t|2000-01-01 00:00:00+00|5", "C SELECT 1", "Z I"}, got)
}

// TestPipelineOnOneGoroutine: a pipeline of statements sent as one packet
// is answered in order by the connection goroutine alone: no watcher
// starts for a statement shorter than the watch delay (a minute here, so
// that a loaded machine cannot make one of them long); one that runs
// longer gets one, and the messages queued behind it still run, in
// order, once it ends.
func TestPipelineOnOneGoroutine(t *testing.T) {
	h := start(t, nil)
	pgwire.SetWatchAfter(h.srv, time.Minute)
	r, _ := connect(t, h.addr, nil)
	require.Equal(t, []string{"1", "Z I"}, r.ext(&pgproto3.Parse{Name: "q", Query: "select $1::int4 as v"}))
	var msgs []pgproto3.FrontendMessage
	var want []string
	for i := range 200 {
		v := []byte(strconv.Itoa(i))
		msgs = append(msgs, &pgproto3.Bind{PreparedStatement: "q", Parameters: [][]byte{v}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		want = append(want, "2", "T v:23/4/-1/0", "D "+string(v), "C SELECT 1", "Z I")
	}
	r.send(msgs...)
	require.Equal(t, want, r.recvN(len(want)))
	require.Zero(t, pgwire.Watchers(h.srv), "quick statements started a watcher")

	pgwire.SetWatchAfter(h.srv, 20*time.Millisecond)
	r.send(&pgproto3.Query{String: "select pg_sleep(0.2)"}, &pgproto3.Query{String: "select 7"})
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "D NULL", "C SELECT 1", "Z I",
		"T ?column?:23/4/-1/0", "D 7", "C SELECT 1", "Z I"}, r.recvN(8))
	require.GreaterOrEqual(t, pgwire.Watchers(h.srv), int64(1), "pg_sleep(0.2) got no watcher")
	require.Equal(t, []string{"T ?column?:23/4/-1/0", "D 8", "C SELECT 1", "Z I"}, r.query("select 8"))
}

// TestWatchClockSpansCalls: the watcher clock is armed once for a run of
// calls, not per call; when it fires during a call that began after it
// was armed, that call has not run watchAfter yet and gets no watcher
// (the clock runs on to its own watchAfter instead). Two 0.6 s
// statements in one packet, watchAfter 1 s: the clock armed by the first
// fires 0.4 s into the second, which then ends before its own second.
func TestWatchClockSpansCalls(t *testing.T) {
	h := start(t, nil)
	pgwire.SetWatchAfter(h.srv, time.Second)
	r, _ := connect(t, h.addr, nil)
	r.send(&pgproto3.Query{String: "select pg_sleep(0.6)"}, &pgproto3.Query{String: "select pg_sleep(0.6)"})
	require.Equal(t, []string{"T pg_sleep:25/-1/-1/0", "D NULL", "C SELECT 1", "Z I",
		"T pg_sleep:25/-1/-1/0", "D NULL", "C SELECT 1", "Z I"}, r.recvN(8))
	require.Zero(t, pgwire.Watchers(h.srv), "a 0.6 s statement got a watcher at a 1 s watch delay")
	require.Equal(t, []string{"T ?column?:23/4/-1/0", "D 8", "C SELECT 1", "Z I"}, r.query("select 8"))
}

// syncEngine wraps an engine's sessions to record the context each Sync
// gets; with instant set they implement pgwire.InstantSync.
type syncEngine struct {
	pgwire.Engine
	instant bool
	ctxs    chan context.Context
}

func (e *syncEngine) Connect(ctx context.Context, info pgwire.StartupInfo) (pgwire.Session, error) {
	s, err := e.Engine.Connect(ctx, info)
	if err != nil {
		return nil, err
	}
	rs := &syncRecorder{Session: s, ctxs: e.ctxs}
	if e.instant {
		return instantSyncRecorder{rs}, nil
	}
	return rs, nil
}

type syncRecorder struct {
	pgwire.Session
	ctxs chan context.Context
}

func (s *syncRecorder) Sync(ctx context.Context, failed bool) error {
	s.ctxs <- ctx
	return s.Session.Sync(ctx, failed)
}

type instantSyncRecorder struct{ *syncRecorder }

func (instantSyncRecorder) InstantSync() {}

// TestInstantSyncWithoutCallContext: a session that implements
// InstantSync has Sync called with the connection's context, which lives
// on after it; any other session gets a call context of its own, ended
// (so cancelled) when Sync returns.
func TestInstantSyncWithoutCallContext(t *testing.T) {
	for _, instant := range []bool{false, true} {
		ctxs := make(chan context.Context, 16)
		h := start(t, func(cfg *pgwire.Config) {
			cfg.Engine = &syncEngine{Engine: cfg.Engine, instant: instant, ctxs: ctxs}
		})
		r, _ := connect(t, h.addr, nil)
		require.Equal(t, []string{"T ?column?:23/4/-1/0", "D 8", "C SELECT 1", "Z I"}, r.query("select 8"))
		var ctx context.Context
		for len(ctxs) > 0 {
			ctx = <-ctxs // the query's Sync is the last one
		}
		require.NotNil(t, ctx)
		if instant {
			require.NoError(t, ctx.Err(), "an InstantSync session's Sync got a call context")
		} else {
			require.Error(t, ctx.Err(), "Sync's call context was not ended with the call")
		}
	}
}
