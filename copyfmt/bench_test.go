package copyfmt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
)

// ticksSchema is the write benchmark's table (bench -writes): ts
// timestamp NOT NULL, sym text, px double precision.
var ticksSchema = arrow.NewSchema([]arrow.Field{
	sqltypes.TimestampType.Field("ts", false),
	sqltypes.TextType.Field("sym", true),
	sqltypes.Float8Type.Field("px", true),
}, nil)

// ticksRow is the benchmark's row i, as bench -writes sends it.
func ticksRow(i int64) (time.Time, string, float64) {
	base := time.Date(2024, 1, 2, 9, 30, 0, 0, time.UTC)
	return base.Add(time.Duration(i) * time.Microsecond), "S" + strconv.Itoa(int(i%100)), float64(i%1000) / 8
}

// ticksData renders n rows of the ticks table in a COPY format, as pgx
// (binary) and psql (text, CSV) send them.
func ticksData(f Format, n int) []byte {
	var b []byte
	if f == Binary {
		b = append(b, binarySignature...)
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	pgEpoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range int64(n) {
		ts, sym, px := ticksRow(i)
		switch f {
		case Binary:
			b = binary.BigEndian.AppendUint16(b, 3)
			b = binary.BigEndian.AppendUint32(b, 8)
			b = binary.BigEndian.AppendUint64(b, uint64(ts.Sub(pgEpoch).Microseconds()))
			b = binary.BigEndian.AppendUint32(b, uint32(len(sym)))
			b = append(b, sym...)
			b = binary.BigEndian.AppendUint32(b, 8)
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(px))
		default:
			d := byte('\t')
			if f == CSV {
				d = ','
			}
			b = ts.AppendFormat(b, "2006-01-02 15:04:05.999999")
			b = append(b, d)
			b = append(b, sym...)
			b = append(b, d)
			b = strconv.AppendFloat(b, px, 'g', -1, 64)
			b = append(b, '\n')
		}
	}
	if f == Binary {
		b = append(b, 0xff, 0xff)
	}
	return b
}

// BenchmarkReader decodes the ticks table in each format: ns/op is per
// row; cpu-ns/op is the process's CPU time (user+system, the garbage
// collector's included) per row, which a loaded machine distorts less.
func BenchmarkReader(b *testing.B) {
	const rows = 100_000
	for _, f := range []Format{Binary, Text, CSV} {
		b.Run(f.String(), func(b *testing.B) {
			data := ticksData(f, rows)
			mem := memory.NewGoAllocator()
			cpu0 := processCPU()
			b.ResetTimer()
			b.SetBytes(int64(len(data)) / rows)
			b.ReportAllocs()
			for i := 0; i < b.N; i += rows {
				r, err := NewReader(bytes.NewReader(data), ticksSchema, Options{Format: f, Table: "ticks"}, mem)
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				for r.Next() {
					got += int(r.RecordBatch().NumRows())
				}
				if err := r.Err(); err != nil || got != rows {
					b.Fatal(fmt.Sprint(got, err))
				}
				r.Release()
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time (user+system) the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
