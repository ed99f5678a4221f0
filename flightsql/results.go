package flightsql

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
)

// A query runs when its FlightInfo is asked for (GetFlightInfo): it is
// planned and opened then, on one snapshot, so planning errors answer
// that call and the result is fixed before any endpoint is fetched. The
// result then waits, holding its snapshot, for the DoGet of its ticket
// (single use) until Config.ResultTTL passes (the endpoint's
// expiration_time; RenewFlightEndpoint extends it).
//
// Ticket format: a TicketStatementQuery whose statement_handle is
//
//	"asof" | version 1 | 16-byte result id | uvarint partition
//
// Partition is the index of the endpoint in the FlightInfo. Every result
// has one partition today; a partitioned plan will list one endpoint per
// partition, each fetchable on its own connection and in any order (see
// doc.go for how a client reassembles the order).

const (
	ticketMagic   = "asof"
	ticketVersion = 1
)

func encodeTicket(id string, partition int) ([]byte, error) {
	h := make([]byte, 0, len(ticketMagic)+1+len(id)+binary.MaxVarintLen64)
	h = append(h, ticketMagic...)
	h = append(h, ticketVersion)
	h = append(h, id...)
	h = binary.AppendUvarint(h, uint64(partition))
	anyT, err := anypb.New(&pb.TicketStatementQuery{StatementHandle: h})
	if err != nil {
		return nil, err
	}
	return proto.Marshal(anyT)
}

// decodeTicket reads a ticket of this server; ok is false for a ticket
// of another kind (a metadata command), which the framework routes.
func decodeTicket(b []byte) (id string, partition int, ok bool, err error) {
	var anyT anypb.Any
	if proto.Unmarshal(b, &anyT) != nil || anyT.MessageIs(&pb.TicketStatementQuery{}) == false {
		return "", 0, false, nil
	}
	var t pb.TicketStatementQuery
	if err := anyT.UnmarshalTo(&t); err != nil {
		return "", 0, true, errBadTicket()
	}
	h := t.GetStatementHandle()
	n := len(ticketMagic) + 1 + 16
	if len(h) <= n || string(h[:len(ticketMagic)]) != ticketMagic || h[len(ticketMagic)] != ticketVersion {
		return "", 0, true, errBadTicket()
	}
	p, k := binary.Uvarint(h[n:])
	if k <= 0 || n+k != len(h) || p > 1<<20 {
		return "", 0, true, errBadTicket()
	}
	return string(h[len(ticketMagic)+1 : n]), int(p), true, nil
}

func errBadTicket() error {
	return sqlerr.New(sqlerr.ProtocolViolation, "malformed ticket")
}

func errNoResult() error {
	return sqlerr.New(sqlerr.InvalidCursorName, "no result for this ticket").
		WithDetail("A ticket is fetched once; it also ends when cancelled, when its transaction ends, or after its expiration time.")
}

// result is a started statement whose rows wait for their DoGet.
type result struct {
	h      *handler
	id     string
	owner  string
	schema *arrow.Schema // announced in FlightInfo; every batch is labelled with it
	cur    *asofsql.Cursor
	// more runs the statement for the next row of bound parameters
	// (nil when there is none); the rows of all follow one another.
	more   func() (*asofsql.Cursor, error)
	cancel context.CancelCauseFunc
	// release gives back the session the result holds (a transaction's, or
	// a connection's inside a SQL transaction block), failing its block if
	// failed is set; nil if none.
	release func(failed bool)

	// guarded by h.mu
	taken   bool
	timer   *time.Timer
	expires time.Time

	once sync.Once
}

// close releases everything the result holds; cause is what a statement
// still running sees. A result whose stream ended in an error fails the
// transaction block it ran in (the error reached the client); one dropped
// before its DoGet (expired, cancelled, its transaction ending) does not,
// as closing an unread portal does not in Postgres.
func (r *result) close(cause error, streamFailed bool) {
	r.once.Do(func() {
		stop := cause
		if stop == nil {
			stop = context.Canceled
		}
		r.cancel(stop)
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		if r.release != nil {
			r.release(streamFailed)
		}
	})
}

// register makes r fetchable and returns its FlightInfo.
func (h *handler) register(r *result, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	ticket, err := encodeTicket(r.id, 0)
	if err != nil {
		r.close(err, false)
		return nil, err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		r.close(errShutdown, false)
		return nil, errShutdown
	}
	if len(h.results) >= h.cfg.MaxResults {
		h.mu.Unlock()
		r.close(nil, false)
		return nil, sqlerr.New("54000", "too many results waiting to be fetched (%d)", h.cfg.MaxResults).
			WithHint("Fetch (DoGet) or cancel the results of earlier statements.")
	}
	h.results[r.id] = r
	r.expires = time.Now().Add(h.cfg.ResultTTL)
	r.timer = time.AfterFunc(h.cfg.ResultTTL, func() { h.drop(r, errExpired) })
	h.mu.Unlock()
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(r.schema, h.mem),
		FlightDescriptor: desc,
		Endpoint: []*flight.FlightEndpoint{{
			Ticket:         &flight.Ticket{Ticket: ticket},
			ExpirationTime: timestamppb.New(r.expires),
		}},
		TotalRecords: -1,
		TotalBytes:   -1,
		Ordered:      true,
	}, nil
}

var (
	errExpired  = sqlerr.New(sqlerr.QueryCanceled, "canceling statement: its result was not fetched before its expiration time")
	errCanceled = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	errShutdown = sqlerr.New(sqlerr.AdminShutdown, "terminating connection due to administrator command")
)

// drop discards r if it is still waiting for its DoGet (expiry, a
// transaction ending, a session closing).
func (h *handler) drop(r *result, cause error) {
	h.mu.Lock()
	waiting := h.results[r.id] == r && !r.taken
	if waiting {
		delete(h.results, r.id)
		r.timer.Stop()
	}
	h.mu.Unlock()
	if waiting {
		r.close(cause, false)
	}
}

// take claims the result of a ticket for its DoGet.
func (h *handler) take(id, user string) (*result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.results[id]
	if r == nil || r.owner != user || r.taken {
		return nil, errNoResult()
	}
	r.taken = true
	r.timer.Stop()
	return r, nil
}

// finish forgets a fetched result.
func (h *handler) finish(r *result, cause error) {
	h.mu.Lock()
	if h.results[r.id] == r {
		delete(h.results, r.id)
	}
	h.mu.Unlock()
	r.close(cause, cause != nil)
}

// cancelResult cancels the result of a ticket: a waiting one is dropped,
// one being fetched ends with 57014. It reports whether there was one.
func (h *handler) cancelResult(id, user string) bool {
	h.mu.Lock()
	r := h.results[id]
	if r == nil || r.owner != user {
		h.mu.Unlock()
		return false
	}
	taken := r.taken
	h.mu.Unlock()
	if taken {
		r.cancel(errCanceled)
	} else {
		h.drop(r, errCanceled)
	}
	return true
}

// renew extends the expiration of a waiting result.
func (h *handler) renew(id, user string) (time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.results[id]
	if r == nil || r.owner != user || r.taken {
		return time.Time{}, errNoResult()
	}
	if !r.timer.Stop() {
		return time.Time{}, errNoResult() // expiring right now
	}
	r.expires = time.Now().Add(h.cfg.ResultTTL)
	r.timer = time.AfterFunc(h.cfg.ResultTTL, func() { h.drop(r, errExpired) })
	return r.expires, nil
}

// next returns the next non-empty batch (a new reference), io.EOF at the
// end.
func (r *result) next() (arrow.RecordBatch, error) {
	for {
		if r.cur.Next() {
			b := r.cur.RecordBatch()
			if b.NumRows() == 0 {
				continue
			}
			b.Retain()
			return b, nil
		}
		if err := r.cur.Err(); err != nil {
			return nil, err
		}
		if r.more == nil {
			return nil, io.EOF
		}
		r.cur.Release()
		r.cur = nil
		c, err := r.more()
		if err != nil {
			return nil, err
		}
		r.cur = c
	}
}

// stream writes r's batches to a DoGet stream. Each batch is the engine's
// own, labelled with the announced schema (no re-encoding) and sent
// without a copy (codec.go), cut into slices of at most maxMessageBytes so
// that a client's default message limit (4 MiB in gRPC) holds. gRPC lets
// a stream queue one message beyond what its flow-control window lets
// out, so a slow reader holds back the engine: at most two batches wait
// on the server.
func (h *handler) stream(r *result, s flight.FlightService_DoGetServer) (err error) {
	ctx := s.Context()
	defer func() { h.finish(r, err) }()
	stop := context.AfterFunc(ctx, func() { r.cancel(context.Cause(ctx)) })
	defer stop()
	fw := &frameWriter{stream: s}
	w := ipc.NewWriterWithPayloadWriter(fw, ipc.WithSchema(r.schema), ipc.WithAllocator(goAlloc))
	defer w.Close()
	for {
		b, err := r.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return sqlerr.From(context.Cause(ctx))
			}
			return err
		}
		if err := writeBatch(w, fw, r.schema, b); err != nil {
			return err
		}
	}
}

// goAlloc is the IPC encoder's allocator: frames alias what it makes, so
// its memory must live as long as referenced (see frameWriter).
var goAlloc = memory.NewGoAllocator()

// maxMessageBytes bounds one FlightData message's body.
const maxMessageBytes = 2 << 20

// writeBatch writes b (and releases it).
func writeBatch(w *ipc.Writer, fw *frameWriter, schema *arrow.Schema, b arrow.RecordBatch) error {
	defer b.Release()
	rb := array.NewRecordBatch(schema, b.Columns(), b.NumRows())
	defer rb.Release()
	fw.batch = rb
	n := rb.NumRows()
	parts := (batchBytes(rb) + maxMessageBytes - 1) / maxMessageBytes
	if parts <= 1 || n <= 1 {
		return w.Write(rb)
	}
	step := (n + int64(parts) - 1) / int64(parts)
	for lo := int64(0); lo < n; lo += step {
		s := rb.NewSlice(lo, min(lo+step, n))
		err := w.Write(s)
		s.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// batchBytes estimates the bytes a batch's IPC body will take: its rows'
// share of its buffers (a batch is often a slice of larger buffers).
func batchBytes(b arrow.RecordBatch) int {
	n := 0
	for _, c := range b.Columns() {
		n += arrayBytes(c)
	}
	return n
}

func arrayBytes(a arrow.Array) int {
	n := a.Len()
	size := 0
	if a.NullN() > 0 {
		size += (n + 7) / 8
	}
	switch a := a.(type) {
	case *array.String:
		offs := a.ValueOffsets()
		return size + 4*(n+1) + int(offs[len(offs)-1]-offs[0])
	case *array.Binary:
		offs := a.ValueOffsets()
		return size + 4*(n+1) + int(offs[len(offs)-1]-offs[0])
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		return size + (fw.BitWidth()*n+7)/8
	}
	return size + dataBytes(a.Data())
}

// dataBytes is the size of all of an array's buffers.
func dataBytes(d arrow.ArrayData) int {
	n := 0
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += buf.Len()
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}
