package exec

import (
	"context"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Series is generate_series(start, stop, step) over integers: one column
// of start, start+step, ... while not past stop, in batches of at most
// seriesBatch rows (bounded memory whatever the range). An empty range
// gives no row.
type Series struct {
	mem              memory.Allocator
	schema           *arrow.Schema
	t                sqltypes.Type
	next, stop, step int64
	done             bool
}

const seriesBatch = 1024

var _ Operator = (*Series)(nil)

// NewSeries makes the operator; t is INTEGER or BIGINT, step nonzero
// (22023 otherwise, as in Postgres).
func NewSeries(mem memory.Allocator, name string, t sqltypes.Type, start, stop, step int64) (*Series, error) {
	if step == 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	if t.Kind != sqltypes.Int4 && t.Kind != sqltypes.Int8 {
		return nil, sqlerr.New(sqlerr.InternalError, "generate_series over %s", t)
	}
	s := &Series{mem: mem, t: t, next: start, stop: stop, step: step}
	s.schema = arrow.NewSchema([]arrow.Field{t.Field(name, false)}, nil)
	return s, nil
}

func (s *Series) Schema() *arrow.Schema          { return s.schema }
func (s *Series) Open(ctx context.Context) error { return nil }
func (s *Series) Close() error                   { return nil }

func (s *Series) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var vals []int64
	for !s.done && len(vals) < seriesBatch {
		if s.step > 0 && s.next > s.stop || s.step < 0 && s.next < s.stop {
			s.done = true
			break
		}
		vals = append(vals, s.next)
		n := s.next + s.step
		if (s.step > 0) != (n > s.next) { // overflow: the series ends here
			s.done = true
		}
		s.next = n
	}
	if len(vals) == 0 {
		return nil, io.EOF
	}
	var arr arrow.Array
	if s.t.Kind == sqltypes.Int4 {
		b := array.NewInt32Builder(s.mem)
		defer b.Release()
		for _, v := range vals {
			b.Append(int32(v))
		}
		arr = b.NewArray()
	} else {
		b := array.NewInt64Builder(s.mem)
		defer b.Release()
		b.AppendValues(vals, nil)
		arr = b.NewArray()
	}
	defer arr.Release()
	return array.NewRecordBatch(s.schema, []arrow.Array{arr}, int64(len(vals))), nil
}

// TimeSeries is generate_series(start, stop, step) over timestamps: start,
// start+step, (start+step)+step, ... while not past stop, the step added
// as timestamp + interval adds it (months clamped to the month's end, on
// loc's wall clock for timestamptz). A step that reaches past the range of
// timestamps is 22008, as in Postgres.
type TimeSeries struct {
	mem        memory.Allocator
	schema     *arrow.Schema
	t          sqltypes.Type
	next, stop int64
	step       arrow.MonthDayNanoInterval
	down       bool
	loc        *time.Location
	done       bool
}

var _ Operator = (*TimeSeries)(nil)

// NewTimeSeries makes the operator; t is TIMESTAMP or TIMESTAMPTZ, the
// step not zero (22023, as in Postgres). The step's sign is Postgres'
// interval comparison with zero (a month counts 30 days).
func NewTimeSeries(mem memory.Allocator, name string, t sqltypes.Type, start, stop int64, step arrow.MonthDayNanoInterval, loc *time.Location) (*TimeSeries, error) {
	sign := vec.IntervalKey(step).Sign()
	if sign == 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	if t.Kind != sqltypes.Timestamp && t.Kind != sqltypes.TimestampTZ {
		return nil, sqlerr.New(sqlerr.InternalError, "generate_series over %s", t)
	}
	if t.Kind == sqltypes.Timestamp || loc == nil {
		loc = time.UTC
	}
	s := &TimeSeries{mem: mem, t: t, next: start, stop: stop, step: step, down: sign < 0, loc: loc}
	s.schema = arrow.NewSchema([]arrow.Field{t.Field(name, false)}, nil)
	return s, nil
}

func (s *TimeSeries) Schema() *arrow.Schema          { return s.schema }
func (s *TimeSeries) Open(ctx context.Context) error { return nil }
func (s *TimeSeries) Close() error                   { return nil }

func (s *TimeSeries) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vals := make([]int64, 0, seriesBatch)
	for !s.done && len(vals) < seriesBatch {
		if !s.down && s.next > s.stop || s.down && s.next < s.stop {
			s.done = true
			break
		}
		vals = append(vals, s.next)
		n, err := vec.AddInterval(s.next, s.step, s.loc)
		if err != nil {
			return nil, err
		}
		if n == s.next { // an infinite start never moves: Postgres loops; stop here
			s.done = true
		}
		s.next = n
	}
	if len(vals) == 0 {
		return nil, io.EOF
	}
	arr := vec.MakeFixed(s.mem, s.t.Arrow(), vals, nil)
	defer arr.Release()
	return array.NewRecordBatch(s.schema, []arrow.Array{arr}, int64(len(vals))), nil
}
