package eval

import (
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// EXTRACT(field FROM x) is Postgres 15's numeric extract: exact values
// (second 5.123456, epoch 1704164645.123456), where date_part computes in
// double precision. Every field is an integer count of 10^-scale units:
// second and epoch microseconds (scale 6), milliseconds scale 3, the rest
// scale 0; julian of a timestamp is a day count with its fraction.

// part is an extracted field: num × 10^-scale, or ±infinity (inf), or NULL.
type part struct {
	num   int64
	scale int32
	frac  *big.Rat // julian's exact day fraction, added to num
	inf   int
	null  bool
}

// extractNum evaluates the numeric EXTRACT for every row.
func (n *datePartNode) extractNum(c *call, ua, xa arrow.Array, valid []bool) (arrow.Array, error) {
	rows := xa.Len()
	us := ua.(*array.String)
	xt := n.x.typ()
	loc := tsLoc(c, xt)
	ts := vec.DecScale(n.t)
	bld := array.NewDecimal128Builder(c.mem, n.t.Arrow().(*arrow.Decimal128Type))
	defer bld.Release()
	lastRaw, unit := "", ""
	for i := 0; i < rows; i++ {
		if !vec.Valid(valid, i) {
			bld.AppendNull()
			continue
		}
		if raw := us.Value(i); unit == "" || raw != lastRaw {
			u, err := parseUnit(raw, xt)
			if err != nil {
				return nil, err
			}
			lastRaw, unit = raw, u
		}
		var p part
		var err error
		switch xt.Kind {
		case sqltypes.Interval:
			p, err = intervalPartNum(vec.Values[arrow.MonthDayNanoInterval](xa)[i], unit, xt)
		case sqltypes.Date:
			p, err = datePartNum(vec.Values[int32](xa)[i], unit, xt)
		default:
			p, err = tsPartNum(vec.Values[int64](xa)[i], unit, loc, xt)
		}
		if err != nil {
			return nil, err
		}
		switch {
		case p.null:
			bld.AppendNull()
			continue
		case p.inf != 0:
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow").
				WithDetail("The result is infinite, and asofsql's NUMERIC has no infinity.")
		}
		v := vec.Rescale(big.NewInt(p.num), p.scale, ts)
		if p.frac != nil {
			f := new(big.Rat).Mul(p.frac, new(big.Rat).SetInt(vec.Pow10(ts)))
			v.Add(v, vec.RoundDiv(f.Num(), f.Denom()))
		}
		d, err := vec.FitDecimal(v, n.t)
		if err != nil {
			return nil, err
		}
		bld.Append(d)
	}
	return bld.NewArray(), nil
}

// tsPartNum is one field of a timestamp (wall clock in loc).
func tsPartNum(us int64, unit string, loc *time.Location, t sqltypes.Type) (part, error) {
	switch unit {
	case "timezone", "timezone_hour", "timezone_minute":
		if t.Kind != sqltypes.TimestampTZ {
			return part{}, errUnitUnsupported(unit, t)
		}
		if vec.IsInfTimestamp(us) {
			return part{null: true}, nil
		}
		_, off := time.UnixMicro(us).In(loc).Zone()
		switch unit {
		case "timezone_hour":
			return part{num: int64(off / 3600)}, nil
		case "timezone_minute":
			return part{num: int64(off / 60 % 60)}, nil
		}
		return part{num: int64(off)}, nil
	}
	if vec.IsInfTimestamp(us) {
		f, null, err := tsPart(us, unit, loc, t)
		if err != nil || null {
			return part{null: null}, err
		}
		if f > 0 {
			return part{inf: 1}, nil
		}
		return part{inf: -1}, nil
	}
	tm := time.UnixMicro(us).In(loc)
	sub := int64(tm.Second())*vec.UsPerSec + int64(tm.Nanosecond()/1000)
	switch unit {
	case "microseconds":
		return part{num: sub}, nil
	case "milliseconds":
		return part{num: sub, scale: 3}, nil
	case "second":
		return part{num: sub, scale: 6}, nil
	case "epoch":
		if t.Kind == sqltypes.Timestamp || t.Kind == sqltypes.TimestampTZ {
			return part{num: us, scale: 6}, nil
		}
	case "julian":
		y, m, d := tm.Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
		ofDay := int64(tm.Hour()*3600+tm.Minute()*60+tm.Second())*vec.UsPerSec + int64(tm.Nanosecond()/1000)
		return part{num: day + julianUnixDay, frac: big.NewRat(ofDay, vec.UsPerDay)}, nil
	}
	f, null, err := tsPart(us, unit, loc, t)
	if err != nil || null {
		return part{null: null}, err
	}
	return part{num: int64(f)}, nil // an integer field
}

// julianUnixDay is the Julian day number of 1970-01-01.
const julianUnixDay = 2440588

// datePartNum is one field of a date: the date fields only.
func datePartNum(d int32, unit string, t sqltypes.Type) (part, error) {
	switch unit {
	case "microseconds", "milliseconds", "second", "minute", "hour", "timezone", "timezone_hour", "timezone_minute":
		return part{}, errUnitUnsupported(unit, t)
	}
	us := int64(d) * vec.UsPerDay
	switch int64(d) {
	case sqltypes.DateInfinity:
		us = sqltypes.TimestampInfinity
	case sqltypes.DateNegInfinity:
		us = sqltypes.TimestampNegInfinity
	}
	if !vec.IsInfTimestamp(us) {
		switch unit {
		case "epoch":
			return part{num: int64(d) * 86400}, nil
		case "julian":
			return part{num: int64(d) + julianUnixDay}, nil
		}
	}
	return tsPartNum(us, unit, time.UTC, sqltypes.TimestampType)
}

// intervalPartNum is one field of an interval.
func intervalPartNum(v arrow.MonthDayNanoInterval, unit string, t sqltypes.Type) (part, error) {
	micros := v.Nanoseconds / 1000
	switch unit {
	case "microseconds":
		return part{num: micros % (60 * vec.UsPerSec)}, nil
	case "milliseconds":
		return part{num: micros % (60 * vec.UsPerSec), scale: 3}, nil
	case "second":
		return part{num: micros % (60 * vec.UsPerSec), scale: 6}, nil
	case "epoch":
		// Postgres: a year is 365.25 days, a month 30 days.
		secs := int64(31557600)*int64(v.Months/12) + int64(2592000)*int64(v.Months%12) + 86400*int64(v.Days)
		return part{num: micros + secs*vec.UsPerSec, scale: 6}, nil
	}
	f, err := intervalPart(v, unit, t)
	if err != nil {
		return part{}, err
	}
	return part{num: int64(f)}, nil
}
