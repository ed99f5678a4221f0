package flightclient

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// frames cuts a marshalled message into 16 KiB pooled buffers, as gRPC's
// transport hands it to a codec.
func framesOf(msg []byte, pool mem.BufferPool) mem.BufferSlice {
	var out mem.BufferSlice
	for len(msg) > 0 {
		n := min(len(msg), frameBufSize)
		b := pool.Get(n)
		copy(*b, msg[:n])
		out = append(out, mem.NewBuffer(b, pool))
		msg = msg[n:]
	}
	return out
}

// BenchmarkDecode decodes the 123 messages of a 1M-row result (260 KB
// bodies) and keeps their bodies until the end, as a client collecting a
// table does: gRPC's protobuf codec against this package's.
func BenchmarkDecode(b *testing.B) {
	body := make([]byte, 260208)
	for i := range body {
		body[i] = byte(i)
	}
	msg, err := proto.Marshal(&flight.FlightData{DataHeader: make([]byte, 280), DataBody: body})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		codec encoding.CodecV2
		pool  mem.BufferPool
	}{
		{"grpc", encoding.GetCodecV2(grpcproto.Name), mem.DefaultBufferPool()},
		{"flightclient", codec{std: encoding.GetCodecV2(grpcproto.Name)}, framePool{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(123 * int64(len(msg)))
			held := make([]*flight.FlightData, 0, 123)
			for b.Loop() {
				held = held[:0]
				for range 123 {
					data := framesOf(msg, c.pool)
					fd := &flight.FlightData{}
					if err := c.codec.Unmarshal(data, fd); err != nil {
						b.Fatal(err)
					}
					data.Free()
					held = append(held, fd)
				}
			}
		})
	}
}
