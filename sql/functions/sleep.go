package functions

import (
	"context"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Sleeping: pg_sleep, pg_sleep_for and pg_sleep_until, as in Postgres,
// return void and wait once per row they are evaluated for (a NULL
// argument returns NULL without waiting). A batch's rows wait in turn,
// so a batch waits for the sum of its rows' seconds (pg_sleep_until: until
// its latest time); the statement's cancellation or timeout ends the
// wait with 57014.

var void = sqltypes.VoidType

// PgSleep is pg_sleep(seconds): seconds may be fractional; zero, negative
// and NaN seconds do not wait, infinite ones wait until the statement is
// cancelled.
var PgSleep = sleepDef("pg_sleep", f8, func(a arrow.Array, i int) time.Duration {
	return secondsDuration(vec.Values[float64](a)[i])
}, Example{"pg_sleep(0)", ""}, Example{"pg_sleep(NULL) IS NULL", "t"})

// PgSleepFor is pg_sleep_for(interval): an interval's seconds as
// extract(epoch from it) counts them (a month is 30 days, a year 365.25).
var PgSleepFor = sleepDef("pg_sleep_for", interval, func(a arrow.Array, i int) time.Duration {
	secs, _ := intervalPart(vec.Values[arrow.MonthDayNanoInterval](a)[i], "epoch", interval)
	return secondsDuration(secs)
}, Example{"pg_sleep_for('1 millisecond')", ""})

// PgSleepUntil is pg_sleep_until(timestamptz): a time already past does
// not wait.
var PgSleepUntil = sleepDef("pg_sleep_until", tstz, func(a arrow.Array, i int) time.Duration {
	us := vec.Values[int64](a)[i]
	if us == sqltypes.TimestampInfinity {
		return math.MaxInt64
	}
	return time.Until(time.UnixMicro(us))
}, Example{"pg_sleep_until(now() - interval '1 day')", ""})

// sleepDef registers a sleeping function of one argument of type param
// that waits wait(a, i) for row i.
func sleepDef(name string, param sqltypes.Type, wait func(a arrow.Array, i int) time.Duration, examples ...Example) *Def {
	return register(&Def{
		Name: name, MinArgs: 1, MaxArgs: 1, Volatile: true,
		Rule: fixed(void, param),
		Prepare: func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
			if len(args) != 1 || args[0].Type().Kind != param.Kind || t.Kind != sqltypes.Void {
				return nil, errTypes
			}
			return sleepKernel(wait), nil
		},
		Examples: examples,
	})
}

// sleepKernel waits wait(i) for each non-NULL row i in turn and returns
// their void values.
func sleepKernel(wait func(a arrow.Array, i int) time.Duration) Kernel {
	return func(in Input) (arrow.Array, error) {
		a, err := in.Arg(0)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		ctx := in.Context()
		for i := range in.Rows() {
			if a.IsNull(i) {
				continue
			}
			if err := sleepCtx(ctx, wait(a, i)); err != nil {
				return nil, err
			}
		}
		return strictRows(in, void, []arrow.Array{a}, func(int) (bool, error) { return true, nil })
	}
}

// secondsDuration converts pg_sleep's seconds: NaN and non-positive
// values are no wait, values past time.Duration's range the longest one.
func secondsDuration(s float64) time.Duration {
	switch {
	case !(s > 0):
		return 0
	case s >= float64(math.MaxInt64)/1e9:
		return math.MaxInt64
	}
	return time.Duration(s * 1e9)
}

// sleepCtx waits d or until ctx ends, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
