package flightsql

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// Results leave without being copied in user space on the way out: the
// IPC encoder's body buffers are the engine's own Arrow buffers, and the
// FlightData message gRPC sends is a short protobuf header followed by
// those buffers themselves (a gRPC codec that emits a buffer list), which
// the transport copies once, into its HTTP/2 frames. arrow-go's
// flight.Writer would copy each body twice more (into one byte slice for
// the FlightData, then into the marshalled protobuf). The batch stays
// referenced until gRPC has written the last byte of the message.

// codec is the server's gRPC codec: the standard protobuf codec, except
// for the result messages DoGet sends (*outFrame).
type codec struct{ std encoding.CodecV2 }

func newCodec() codec { return codec{std: encoding.GetCodecV2(grpcproto.Name)} }

func (c codec) Name() string { return grpcproto.Name }

func (c codec) Unmarshal(data mem.BufferSlice, v any) error { return c.std.Unmarshal(data, v) }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*outFrame)
	if !ok {
		return c.std.Marshal(v)
	}
	return f.marshal(), nil
}

// FlightData field numbers (Flight.proto).
const (
	fieldDataHeader = 2
	fieldDataBody   = 1000
)

// outFrame is one FlightData message of a DoGet stream: the IPC message
// header and the body as slices of Arrow buffers (or of padding).
type outFrame struct {
	header []byte
	body   [][]byte
	size   int
	// done runs once gRPC no longer needs the bytes.
	done func()
}

// marshal lays the message out as protobuf: data_header, then data_body
// whose bytes are the body slices. The last buffer is an empty one whose
// release (gRPC frees a message's buffers in order, after writing them)
// calls done.
func (f *outFrame) marshal() mem.BufferSlice {
	prefix := make([]byte, 0, 2*binary.MaxVarintLen64+len(f.header)+8)
	prefix = protowire.AppendTag(prefix, fieldDataHeader, protowire.BytesType)
	prefix = protowire.AppendVarint(prefix, uint64(len(f.header)))
	prefix = append(prefix, f.header...)
	if f.size > 0 {
		prefix = protowire.AppendTag(prefix, fieldDataBody, protowire.BytesType)
		prefix = protowire.AppendVarint(prefix, uint64(f.size))
	}
	out := make(mem.BufferSlice, 0, len(f.body)+2)
	out = append(out, mem.SliceBuffer(prefix))
	for _, b := range f.body {
		out = append(out, mem.SliceBuffer(b))
	}
	end := &frameEnd{done: f.done}
	r := &releaser{end: end}
	// gRPC drops, without freeing it, a message queued for a stream that
	// its writer has just cleaned up (a client cancelling mid-stream:
	// loopyWriter.preprocessData in grpc-go 1.83); the frame's batch is
	// then released when the garbage collector finds the sentinel's
	// releaser unreachable.
	runtime.AddCleanup(r, (*frameEnd).run, end)
	return append(out, mem.NewBuffer(sentinels.Get().(*[]byte), r))
}

// sentinels are the empty buffers that mark a frame's end; gRPC counts
// references only on buffers above its pooling threshold.
var sentinels = sync.Pool{New: func() any {
	n := 1 << 10
	for mem.IsBelowBufferPoolingThreshold(n) {
		n *= 2
	}
	b := make([]byte, 0, n)
	return &b
}}

// releaser is the "pool" of a frame's sentinel buffer: its Put is the
// moment gRPC has finished with the frame.
type releaser struct{ end *frameEnd }

// frameEnd runs a frame's done once, whichever comes first: gRPC freeing
// the frame, or the frame becoming garbage.
type frameEnd struct {
	once atomic.Bool
	done func()
}

func (e *frameEnd) run() {
	if e.once.CompareAndSwap(false, true) && e.done != nil {
		e.done()
	}
}

func (r *releaser) Get(int) *[]byte { panic("flightsql: releaser hands out no buffers") }

func (r *releaser) Put(b *[]byte) {
	r.end.run()
	*b = (*b)[:0]
	sentinels.Put(b)
}

// frameWriter is the IPC payload writer of a DoGet stream: it turns each
// payload into an outFrame that aliases the payload's body. The body is
// the batch's own buffers (retained until the frame is sent), buffers the
// IPC encoder made (rebased offsets of a sliced array: the encoder must
// allocate them from the Go allocator, whose memory lives as long as it
// is referenced), or static padding.
type frameWriter struct {
	stream grpc.ServerStream
	batch  arrow.RecordBatch // being encoded
}

func (w *frameWriter) Start() error { return nil }
func (w *frameWriter) Close() error { return nil }

func (w *frameWriter) WritePayload(p ipc.Payload) error {
	meta := p.Meta()
	f := &outFrame{}
	if meta != nil {
		f.header = meta.Bytes()
	}
	var c collector
	if err := p.SerializeBody(&c); err != nil {
		if meta != nil {
			meta.Release()
		}
		return err
	}
	f.body, f.size = c.parts, c.size
	b := w.batch
	if b != nil {
		b.Retain()
	}
	f.done = func() {
		if meta != nil {
			meta.Release()
		}
		if b != nil {
			b.Release()
		}
	}
	return w.stream.SendMsg(f)
}

// collector receives the body from Payload.SerializeBody and keeps the
// slices it is given (see frameWriter for why they stay valid).
type collector struct {
	parts [][]byte
	size  int
}

func (c *collector) Write(p []byte) (int, error) {
	if len(p) > 0 {
		c.parts = append(c.parts, p)
		c.size += len(p)
	}
	return len(p), nil
}
