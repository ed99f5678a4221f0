// Package flightclient has gRPC dial options for Go Flight clients built on
// arrow-go (flightsql.NewClient, flight.NewClientWithMiddleware) that cut
// the CPU a client spends receiving record batches, against any Flight
// server.
//
// By default grpc-go reads each HTTP/2 data frame into a buffer from its
// pool, which it zeroes first; copies a message that spans several frames
// into one buffer from the pool (zeroing the whole pooled buffer, 1 MiB
// for a message of 300 KB), and protobuf then copies FlightData.data_body
// out of it into the slice that arrow-go's IPC reader wraps. With
// DialOptions the body is copied once, from the frames straight into its
// own slice; frame buffers are not zeroed (the transport overwrites every
// byte it hands on), the connection reads the socket in larger pieces,
// and its flow-control window is fixed (4 MiB) rather than grown with
// pings. The batches received are the same bytes.
package flightclient

import (
	"bytes"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// DialOptions returns the options to add to a Flight client's own.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(codec{std: encoding.GetCodecV2(grpcproto.Name)})),
		experimental.WithBufferPool(framePool{}),
		grpc.WithReadBufferSize(readBufferSize),
		grpc.WithInitialWindowSize(windowSize),
		grpc.WithInitialConnWindowSize(windowSize),
	}
}

// readBufferSize is how much a connection reads from its socket at once
// (gRPC's default is 32 KiB): fewer read system calls.
const readBufferSize = 256 << 10

// windowSize is the HTTP/2 flow-control window of a stream and of the
// connection: how far a server may send ahead of what the client has
// read. Fixing it turns off gRPC's estimate of the bandwidth-delay
// product, which grows the window (up to 16 MiB) by sending a ping with
// the data all the time: fewer system calls and wake-ups on both sides.
const windowSize = 4 << 20

// frameBufSize is the capacity of the pooled frame buffers: gRPC's largest
// HTTP/2 frame.
const frameBufSize = 16 << 10

// framePool hands out frame buffers without zeroing them, and leaves other
// sizes to gRPC's default pool.
type framePool struct{}

var frames = sync.Pool{New: func() any {
	b := make([]byte, frameBufSize)
	return &b
}}

func (framePool) Get(n int) *[]byte {
	if n > frameBufSize {
		return mem.DefaultBufferPool().Get(n)
	}
	b := frames.Get().(*[]byte)
	*b = (*b)[:n]
	return b
}

func (framePool) Put(b *[]byte) {
	if cap(*b) != frameBufSize {
		mem.DefaultBufferPool().Put(b)
		return
	}
	frames.Put(b)
}

// codec decodes FlightData itself; everything else goes to the standard
// protobuf codec.
type codec struct{ std encoding.CodecV2 }

func (c codec) Name() string { return grpcproto.Name }

func (c codec) Marshal(v any) (mem.BufferSlice, error) { return c.std.Marshal(v) }

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	fd, ok := v.(*flight.FlightData)
	if !ok || decode(data, fd) != nil {
		// Malformed: the standard codec says how.
		return c.std.Unmarshal(data, v)
	}
	return nil
}

// FlightData field numbers (Flight.proto).
const (
	fieldDescriptor  = 1
	fieldDataHeader  = 2
	fieldAppMetadata = 3
	fieldDataBody    = 1000
)

// decode sets fd from the protobuf message in data (gRPC's buffers,
// which go back to its pool afterwards): the bytes fields are copied out,
// data_body straight from the buffers into its own slice; unknown fields
// are kept, as protobuf keeps them.
func decode(data mem.BufferSlice, fd *flight.FlightData) error {
	proto.Reset(fd)
	var unknown []byte
	r := reader{data: data}
	for !r.done() {
		tag, err := r.varint()
		if err != nil {
			return err
		}
		num, typ := protowire.DecodeTag(tag)
		if num < protowire.MinValidNumber {
			return errMalformed
		}
		known := typ == protowire.BytesType &&
			(num == fieldDescriptor || num == fieldDataHeader || num == fieldAppMetadata || num == fieldDataBody)
		if !known {
			unknown = protowire.AppendTag(unknown, num, typ)
		}
		switch typ {
		case protowire.VarintType:
			var v uint64
			v, err = r.varint()
			unknown = protowire.AppendVarint(unknown, v)
		case protowire.Fixed32Type:
			unknown, err = r.appendN(unknown, 4)
		case protowire.Fixed64Type:
			unknown, err = r.appendN(unknown, 8)
		case protowire.BytesType:
			var n uint64
			if n, err = r.varint(); err != nil {
				return err
			}
			if n > uint64(r.left()) {
				return errMalformed
			}
			if !known {
				unknown = protowire.AppendVarint(unknown, n)
				unknown, err = r.appendN(unknown, int(n))
				break
			}
			// One copy, into memory not zeroed first (bytes.Join).
			b := bytes.Join(r.pieces(int(n)), nil)
			switch num {
			case fieldDescriptor:
				if fd.FlightDescriptor == nil {
					fd.FlightDescriptor = &flight.FlightDescriptor{}
				}
				err = proto.UnmarshalOptions{Merge: true}.Unmarshal(b, fd.FlightDescriptor)
			case fieldDataHeader:
				fd.DataHeader = b
			case fieldAppMetadata:
				fd.AppMetadata = b
			case fieldDataBody:
				fd.DataBody = b
			}
		default: // groups: never in FlightData; protobuf decodes them
			return errMalformed
		}
		if err != nil {
			return err
		}
	}
	if len(unknown) > 0 {
		fd.ProtoReflect().SetUnknown(unknown)
	}
	return nil
}

var errMalformed = protowire.ParseError(-1)

// reader reads a BufferSlice from start to end.
type reader struct {
	data mem.BufferSlice
	cur  []byte // what is left of data[i-1]
	i    int
}

// fill makes cur non-empty unless everything was read.
func (r *reader) fill() bool {
	for len(r.cur) == 0 {
		if r.i == len(r.data) {
			return false
		}
		r.cur = r.data[r.i].ReadOnlyData()
		r.i++
	}
	return true
}

func (r *reader) done() bool { return !r.fill() }

// left is how many bytes are left.
func (r *reader) left() int {
	n := len(r.cur)
	for _, b := range r.data[r.i:] {
		n += b.Len()
	}
	return n
}

func (r *reader) varint() (uint64, error) {
	if r.fill() && len(r.cur) >= protowire.SizeVarint(1<<63) {
		v, n := protowire.ConsumeVarint(r.cur)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		r.cur = r.cur[n:]
		return v, nil
	}
	// Across buffers, or near the end: byte by byte.
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if !r.fill() {
			return 0, errMalformed
		}
		c := r.cur[0]
		r.cur = r.cur[1:]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errMalformed
}

// appendN appends the next n bytes to b.
func (r *reader) appendN(b []byte, n int) ([]byte, error) {
	for n > 0 {
		if !r.fill() {
			return b, errMalformed
		}
		k := min(n, len(r.cur))
		b = append(b, r.cur[:k]...)
		r.cur = r.cur[k:]
		n -= k
	}
	return b, nil
}

// pieces returns the next n bytes (the caller checked that enough are
// left) as slices of the buffers.
func (r *reader) pieces(n int) [][]byte {
	var out [][]byte
	for n > 0 && r.fill() {
		k := min(n, len(r.cur))
		out = append(out, r.cur[:k])
		r.cur = r.cur[k:]
		n -= k
	}
	return out
}
