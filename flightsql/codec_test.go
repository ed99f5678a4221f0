package flightsql

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// sink is a server stream that marshals what DoGet sends with the
// server's codec and keeps the bytes, freeing the buffers as gRPC's
// transport does once written.
type sink struct {
	grpc.ServerStream
	c      codec
	frames [][]byte
}

func (s *sink) Context() context.Context { return context.Background() }

func (s *sink) SendMsg(m any) error {
	data, err := s.c.Marshal(m)
	if err != nil {
		return err
	}
	s.frames = append(s.frames, data.Materialize())
	data.Free()
	return nil
}

// frameReader replays marshalled frames as FlightData messages.
type frameReader struct {
	frames [][]byte
}

func (r *frameReader) Recv() (*flight.FlightData, error) {
	if len(r.frames) == 0 {
		return nil, io.EOF
	}
	var fd flight.FlightData
	// The standard codec must read what ours wrote.
	if err := encoding.GetCodecV2(grpcproto.Name).Unmarshal(mem.BufferSlice{mem.SliceBuffer(r.frames[0])}, &fd); err != nil {
		return nil, err
	}
	r.frames = r.frames[1:]
	return &fd, nil
}

// TestFramesCarryBatchesUnchanged: batches with dictionary, nested and
// sliced columns go through the zero-copy frame writer and the codec, and
// come out of arrow-go's Flight reader equal (types, dictionaries and
// values kept); the batches are released once their frames are written.
func TestFramesCarryBatchesUnchanged(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "sym", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "bids", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "q", Type: arrow.StructOf(arrow.Field{Name: "ts", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[
		{"sym": "A", "bids": [1.5, 2.5], "q": {"ts": 1, "ok": true}, "s": "one"},
		{"sym": null, "bids": null, "q": null, "s": null},
		{"sym": "B", "bids": [], "q": {"ts": 3, "ok": null}, "s": "three"},
		{"sym": "A", "bids": [4], "q": {"ts": 4, "ok": false}, "s": "four"}
	]`))
	require.NoError(t, err)
	defer rec.Release()
	sliced := rec.NewSlice(1, 4) // non-zero offsets: the encoder rebuilds some buffers
	defer sliced.Release()

	s := &sink{c: newCodec()}
	fw := &frameWriter{stream: s}
	w := ipc.NewWriterWithPayloadWriter(fw, ipc.WithSchema(schema), ipc.WithAllocator(goAlloc))
	for _, b := range []arrow.RecordBatch{rec, sliced} {
		b.Retain()
		require.NoError(t, writeBatch(w, fw, schema, b))
	}
	require.NoError(t, w.Close())

	rdr, err := flight.NewRecordReader(&frameReader{frames: s.frames}, ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer rdr.Release()
	require.True(t, rdr.Schema().Equal(schema), "%s", rdr.Schema())
	for _, want := range []arrow.RecordBatch{rec, sliced} {
		require.True(t, rdr.Next(), "%v", rdr.Err())
		got := rdr.RecordBatch()
		require.True(t, array.RecordEqual(want, got), "want %v\ngot %v", want, got)
	}
	require.False(t, rdr.Next())
	require.NoError(t, rdr.Err())
}

// TestFrameLayout: a frame is a protobuf FlightData whose data_body is
// the concatenated body slices.
func TestFrameLayout(t *testing.T) {
	f := &outFrame{header: []byte("head"), body: [][]byte{[]byte("ab"), []byte("cde")}, size: 5}
	done := false
	f.done = func() { done = true }
	data := f.marshal()
	var fd flight.FlightData
	require.NoError(t, proto.Unmarshal(data.Materialize(), &fd))
	require.Equal(t, []byte("head"), fd.DataHeader)
	require.True(t, bytes.Equal([]byte("abcde"), fd.DataBody))
	require.False(t, done)
	data.Free()
	require.True(t, done, "freeing the frame's buffers releases it")
}
