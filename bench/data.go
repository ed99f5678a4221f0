package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batchRows is the generator's batch size; it is part of the data's
// definition because the random draws are made batch by batch (all keys of
// a batch, then t and payload row by row), exactly as exec/asof's genSource.
const batchRows = 64 * 1024

// Input is one generated, fully materialised input: columns t (int64),
// k (int64 or string) and a float64 payload named lp (left) or rp (right).
// t is strictly increasing, so no two rows of one input share a t: the
// tie rules of the spec and DuckDB's nondeterministic tie-break can never
// come into play, and every engine must give exactly the same answer.
type Input struct {
	Name    string
	Schema  *arrow.Schema
	Batches []arrow.RecordBatch
	Rows    int64
}

// Dataset is the data of one shape, generated once per run of the tool.
type Dataset struct {
	Shape  Shape
	Left   Input
	Rights []Input
}

// Release frees every batch of the dataset.
func (d *Dataset) Release() {
	for _, in := range append([]Input{d.Left}, d.Rights...) {
		for _, b := range in.Batches {
			b.Release()
		}
	}
	d.Left.Batches = nil
	for i := range d.Rights {
		d.Rights[i].Batches = nil
	}
}

// Bytes is the size of the dataset's Arrow buffers.
func (d *Dataset) Bytes() int64 {
	var n int64
	for _, in := range append([]Input{d.Left}, d.Rights...) {
		for _, b := range in.Batches {
			for _, c := range b.Columns() {
				for _, buf := range c.Data().Buffers() {
					if buf != nil {
						n += int64(buf.Len())
					}
				}
			}
		}
	}
	return n
}

// Generate builds the shape's data deterministically: the left input with
// seed 1 and right input i with seed 2+i, as exec/asof's BenchmarkJoin
// does. A right input with fewer rows than the left is spread over the same
// time span by multiplying its t by Left/Right.
//
// An operator shape's data is table t alone (GenerateTable), as Left.
func Generate(s Shape, mem memory.Allocator) *Dataset {
	d := &Dataset{Shape: s}
	if s.IsQuery() {
		d.Left = GenerateTable(s.Left, mem)
		return d
	}
	d.Left = genInput(mem, "l", "lp", s.Left, s.Card, s.StrKeys, 1, 1)
	step := int64(1)
	if s.Right < s.Left {
		step = s.Left / s.Right
	}
	for i := 0; i < s.Rights; i++ {
		d.Rights = append(d.Rights, genInput(mem, "r"+strconv.Itoa(i+1), "rp", s.Right, s.Card, s.StrKeys, uint64(2+i), step))
	}
	return d
}

func genInput(mem memory.Allocator, name, payload string, rows int64, card int, strKeys bool, seed uint64, step int64) Input {
	kt := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if strKeys {
		kt = arrow.BinaryTypes.String
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "t", Type: arrow.PrimitiveTypes.Int64},
		{Name: "k", Type: kt},
		{Name: payload, Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	var names []string
	if strKeys {
		names = make([]string, card)
		for i := range names {
			names[i] = fmt.Sprintf("SYM%013d", i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	in := Input{Name: name, Schema: schema, Rows: rows}
	tb := array.NewInt64Builder(mem)
	defer tb.Release()
	pb := array.NewFloat64Builder(mem)
	defer pb.Release()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	var t int64
	for done := int64(0); done < rows; {
		n := int(min(batchRows, rows-done))
		done += int64(n)
		var keys arrow.Array
		if strKeys {
			sb.Reserve(n)
			sb.ReserveData(n * 16)
			for i := 0; i < n; i++ {
				sb.Append(names[rng.IntN(card)])
			}
			keys = sb.NewArray()
		} else {
			ib.Reserve(n)
			for i := 0; i < n; i++ {
				ib.UnsafeAppend(int64(rng.IntN(card)))
			}
			keys = ib.NewArray()
		}
		tb.Reserve(n)
		pb.Reserve(n)
		for i := 0; i < n; i++ {
			t += 1 + int64(rng.IntN(2))
			tb.UnsafeAppend(t * step)
			pb.UnsafeAppend(rng.Float64())
		}
		ts, ps := tb.NewArray(), pb.NewArray()
		in.Batches = append(in.Batches, array.NewRecordBatch(schema, []arrow.Array{ts, keys, ps}, int64(n)))
		ts.Release()
		keys.Release()
		ps.Release()
	}
	return in
}
