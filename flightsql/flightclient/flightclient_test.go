package flightclient

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// split cuts msg into pieces of random sizes (1 byte up to a frame), as
// the transport hands a message to the codec.
func split(rng *rand.Rand, msg []byte) mem.BufferSlice {
	var out mem.BufferSlice
	for len(msg) > 0 {
		n := min(len(msg), 1+rng.IntN(frameBufSize))
		if rng.IntN(4) == 0 {
			n = min(len(msg), 1+rng.IntN(4)) // tags and lengths across pieces
		}
		out = append(out, mem.SliceBuffer(append([]byte(nil), msg[:n]...)))
		msg = msg[n:]
	}
	return out
}

func bytesOf(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// requireSame decodes msg (split at random) with the codec and with
// gRPC's protobuf codec, and requires the same message.
func requireSame(t *testing.T, rng *rand.Rand, msg []byte) *flight.FlightData {
	t.Helper()
	c := codec{std: encoding.GetCodecV2(grpcproto.Name)}
	want := &flight.FlightData{}
	errWant := c.std.Unmarshal(mem.BufferSlice{mem.SliceBuffer(msg)}, want)
	got := &flight.FlightData{AppMetadata: []byte("stale")} // reset by Unmarshal
	errGot := c.Unmarshal(split(rng, msg), got)
	if errWant != nil {
		require.Error(t, errGot)
		return nil
	}
	require.NoError(t, errGot)
	require.True(t, proto.Equal(want, got), "want %v\ngot  %v", want, got)
	if len(got.DataBody) > 0 {
		require.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(got.DataBody)))%8, "body not 8-byte aligned")
	}
	return got
}

func TestDecodeSameAsProtobuf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		fd := &flight.FlightData{}
		if rng.IntN(3) == 0 {
			fd.FlightDescriptor = &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: bytesOf(rng, rng.IntN(50)), Path: []string{"a", "b"}}
		}
		if rng.IntN(5) > 0 {
			fd.DataHeader = bytesOf(rng, rng.IntN(400))
		}
		if rng.IntN(3) == 0 {
			fd.AppMetadata = bytesOf(rng, rng.IntN(100))
		}
		if i%3 > 0 {
			fd.DataBody = bytesOf(rng, 8*rng.IntN(40000))
		}
		msg, err := proto.Marshal(fd)
		require.NoError(t, err)
		got := requireSame(t, rng, msg)
		require.Equal(t, fd.DataBody, got.DataBody)
	}
}

// TestDecodeUnusual: unknown fields of every wire type (groups included,
// which the codec leaves to protobuf), fields repeated (the last wins, a
// descriptor merges), fields in any order, and malformed messages.
func TestDecodeUnusual(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	field := func(b []byte, num protowire.Number, v []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, v)
	}
	desc := func(path string) []byte {
		b, err := proto.Marshal(&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{path}})
		require.NoError(t, err)
		return b
	}
	var m []byte
	m = field(m, fieldDataBody, bytesOf(rng, 4096))
	m = protowire.AppendTag(m, 7, protowire.VarintType)
	m = protowire.AppendVarint(m, 1<<40)
	m = protowire.AppendTag(m, 8, protowire.Fixed32Type)
	m = protowire.AppendFixed32(m, 5)
	m = protowire.AppendTag(m, 9, protowire.Fixed64Type)
	m = protowire.AppendFixed64(m, 6)
	m = field(m, 10, []byte("unknown"))
	m = field(m, fieldDescriptor, desc("x"))
	m = field(m, fieldDataHeader, []byte("first"))
	m = field(m, fieldDataHeader, []byte("second"))
	m = field(m, fieldDescriptor, desc("y"))
	m = field(m, fieldAppMetadata, nil)
	m = field(m, fieldDataBody, bytesOf(rng, 800))
	for range 20 {
		got := requireSame(t, rng, m)
		require.Equal(t, []byte("second"), got.DataHeader)
		require.Equal(t, []string{"x", "y"}, got.FlightDescriptor.Path)
	}
	g := protowire.AppendTag(nil, 11, protowire.StartGroupType)
	g = protowire.AppendTag(g, 1, protowire.VarintType)
	g = protowire.AppendVarint(g, 3)
	g = protowire.AppendTag(g, 11, protowire.EndGroupType)
	requireSame(t, rng, append(g, m...))

	for _, bad := range [][]byte{
		m[:len(m)-1],          // body cut short
		m[:3],                 // inside a length
		{0x80},                // a tag cut short
		{0x00, 0x01},          // field number 0
		append(m, 0x12, 0x80), // header length cut short
		append(m, 0x12, 0x05), // header longer than the message
		append(m, 0x0b),       // a group that does not end
		append(m, 0x0c),       // the end of a group that did not start
		field(nil, fieldDescriptor, []byte{0xff}), // a malformed descriptor
	} {
		requireSame(t, rng, bad)
	}
}

// TestOtherMessages go to the protobuf codec.
func TestOtherMessages(t *testing.T) {
	c := codec{std: encoding.GetCodecV2(grpcproto.Name)}
	in := &flight.Ticket{Ticket: []byte("t")}
	data, err := c.Marshal(in)
	require.NoError(t, err)
	out := &flight.Ticket{}
	require.NoError(t, c.Unmarshal(data, out))
	require.True(t, proto.Equal(in, out))
}

func TestFramePool(t *testing.T) {
	var p framePool
	b := p.Get(5000)
	require.Len(t, *b, 5000)
	require.Equal(t, frameBufSize, cap(*b))
	p.Put(b)
	big := p.Get(frameBufSize + 1)
	require.Len(t, *big, frameBufSize+1)
	p.Put(big)
}
