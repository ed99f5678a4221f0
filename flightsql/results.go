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
// result then waits, holding its snapshot, for the DoGets of its tickets
// (each single use) until Config.ResultTTL passes (the endpoints'
// expiration_time; RenewFlightEndpoint extends it for all of them). A
// row-wise query has one part per endpoint (asofsql.Stmt.ExecutePartitions),
// all opened at once on the one snapshot: the result holds it until the
// last part is fetched or dropped.
//
// Ticket format: a TicketStatementQuery whose statement_handle is
//
//	"asof" | version 1 | 16-byte result id | uvarint partition
//
// Partition is the index of the endpoint in the FlightInfo: each is
// fetchable on its own connection and in any order (see doc.go for how a
// client reassembles the order).

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

// result is a started statement whose rows wait for their DoGets: one
// part per endpoint (several for a partitioned query, see doc.go), all
// on the one snapshot the statement was opened on.
type result struct {
	h      *handler
	id     string
	owner  string
	schema *arrow.Schema // announced in FlightInfo; every batch is labelled with it
	parts  []*part
	// more runs the statement for the next row of bound parameters
	// (nil when there is none); the rows of all follow one another. A
	// result with more has one part.
	more   func() (*asofsql.Cursor, error)
	cancel context.CancelCauseFunc // every part's
	// release gives back the session the result holds (a transaction's, or
	// a connection's inside a SQL transaction block), failing its block if
	// failed is set; nil if none.
	release func(failed bool)

	// guarded by h.mu
	timer   *time.Timer
	expires time.Time

	once sync.Once
}

// part is the rows of one endpoint.
type part struct {
	cur *asofsql.Cursor // owned by the DoGet streaming it, once taken
	// cancel stops this part alone (the result's cancel for a single one).
	cancel context.CancelCauseFunc
	state  partState // guarded by h.mu
	// gone is why a part dropped before its DoGet went (expiry, cancel).
	gone error
}

type partState uint8

const (
	partWaiting partState = iota // for its DoGet
	partStreaming
	partDone
)

// count returns how many parts are in state s (h.mu held).
func (r *result) count(s partState) int {
	n := 0
	for _, p := range r.parts {
		if p.state == s {
			n++
		}
	}
	return n
}

// close releases everything the result holds once no part streams; cause
// is what a statement still running sees. A result whose stream ended in
// an error fails the transaction block it ran in (the error reached the
// client); one dropped before its DoGet (expired, cancelled, its
// transaction ending) does not, as closing an unread portal does not in
// Postgres.
func (r *result) close(cause error, streamFailed bool) {
	r.once.Do(func() {
		stop := cause
		if stop == nil {
			stop = context.Canceled
		}
		r.cancel(stop)
		for _, p := range r.parts {
			if p.cur != nil {
				p.cur.Release()
				p.cur = nil
			}
		}
		if r.release != nil {
			r.release(streamFailed)
		}
	})
}

// register makes r fetchable and returns its FlightInfo: one endpoint per
// part, in result order.
func (h *handler) register(r *result, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	tickets := make([][]byte, len(r.parts))
	for i := range r.parts {
		t, err := encodeTicket(r.id, i)
		if err != nil {
			r.close(err, false)
			return nil, err
		}
		tickets[i] = t
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
	eps := make([]*flight.FlightEndpoint, len(tickets))
	for i, t := range tickets {
		eps[i] = &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: t}, ExpirationTime: timestamppb.New(r.expires)}
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(r.schema, h.mem),
		FlightDescriptor: desc,
		Endpoint:         eps,
		TotalRecords:     -1,
		TotalBytes:       -1,
		Ordered:          true,
	}, nil
}

var (
	errExpired  = sqlerr.New(sqlerr.QueryCanceled, "canceling statement: its result was not fetched before its expiration time")
	errCanceled = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	errShutdown = sqlerr.New(sqlerr.AdminShutdown, "terminating connection due to administrator command")
)

// drop discards the parts of r still waiting for their DoGet (expiry, a
// cancel, a transaction ending, a session closing); r goes once no part
// streams.
func (h *handler) drop(r *result, cause error) {
	var curs []*asofsql.Cursor
	h.mu.Lock()
	if h.results[r.id] != r {
		h.mu.Unlock()
		return
	}
	for _, p := range r.parts {
		if p.state == partWaiting {
			p.state, p.gone = partDone, cause
			curs = append(curs, p.cur)
			p.cur = nil
		}
	}
	last := r.count(partStreaming) == 0
	if last {
		h.forget(r)
	}
	h.mu.Unlock()
	for _, c := range curs {
		c.Release()
	}
	if last {
		r.close(cause, false)
	}
}

// forget removes r from the results (h.mu held), remembering why for the
// tickets of parts never fetched.
func (h *handler) forget(r *result) {
	delete(h.results, r.id)
	r.timer.Stop()
	for _, p := range r.parts {
		if p.gone != nil {
			h.gone.add(r.id, p.gone)
			return
		}
	}
}

// take claims part p of the result of a ticket for its DoGet.
func (h *handler) take(id string, p int, user string) (*result, *part, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.results[id]
	if r == nil || r.owner != user {
		if r == nil {
			if cause := h.gone.get(id); cause != nil {
				return nil, nil, errGone(cause)
			}
		}
		return nil, nil, errNoResult()
	}
	if p >= len(r.parts) {
		return nil, nil, errBadTicket()
	}
	pt := r.parts[p]
	if pt.state != partWaiting {
		if pt.gone != nil {
			return nil, nil, errGone(pt.gone)
		}
		return nil, nil, errNoResult()
	}
	pt.state = partStreaming
	if r.count(partWaiting) == 0 {
		r.timer.Stop()
	}
	return r, pt, nil
}

// errGone answers the DoGet of a part that went before it was fetched.
func errGone(cause error) error {
	if cause == errExpired {
		return sqlerr.New(sqlerr.InvalidCursorName, "the result of this ticket expired before it was fetched").
			WithHint("Fetch every endpoint before its expiration_time, or extend it with RenewFlightEndpoint.")
	}
	return sqlerr.New(sqlerr.InvalidCursorName, "the result of this ticket is gone: %s", sqlerr.From(cause).Message)
}

// finish ends the DoGet of part p of r; the last part to end releases r.
func (h *handler) finish(r *result, p *part, cause error) {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	h.mu.Lock()
	p.state = partDone
	last := h.results[r.id] == r && r.count(partDone) == len(r.parts)
	if last {
		h.forget(r)
	}
	h.mu.Unlock()
	if len(r.parts) > 1 {
		p.cancel(context.Canceled) // its context's resources; the rows were sent
	}
	if last {
		r.close(cause, cause != nil)
	}
}

// cancelResult cancels the result of a ticket: parts waiting are dropped,
// those being fetched end with 57014. It reports whether there was one.
func (h *handler) cancelResult(id, user string) bool {
	h.mu.Lock()
	r := h.results[id]
	if r == nil || r.owner != user {
		h.mu.Unlock()
		return false
	}
	streaming := r.count(partStreaming) > 0
	h.mu.Unlock()
	if streaming {
		r.cancel(errCanceled)
	}
	h.drop(r, errCanceled)
	return true
}

// renew extends the expiration of a result with parts waiting.
func (h *handler) renew(id, user string) (time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.results[id]
	if r == nil || r.owner != user || r.count(partWaiting) == 0 {
		if r == nil {
			if cause := h.gone.get(id); cause != nil {
				return time.Time{}, errGone(cause)
			}
		}
		return time.Time{}, errNoResult()
	}
	if !r.timer.Stop() {
		return time.Time{}, errNoResult() // expiring right now
	}
	r.expires = time.Now().Add(h.cfg.ResultTTL)
	r.timer = time.AfterFunc(h.cfg.ResultTTL, func() { h.drop(r, errExpired) })
	return r.expires, nil
}

// goneResults remembers, for a while, why recent results went before all
// their endpoints were fetched, so that a late DoGet gets a clear error.
// Bounded: the oldest entries are forgotten first.
type goneResults struct {
	why   map[string]error
	order []string
}

const maxGone = 4096

func (g *goneResults) add(id string, cause error) {
	if g.why == nil {
		g.why = map[string]error{}
	}
	if _, ok := g.why[id]; ok {
		return
	}
	if len(g.order) >= maxGone {
		delete(g.why, g.order[0])
		g.order = g.order[1:]
	}
	g.why[id] = cause
	g.order = append(g.order, id)
}

func (g *goneResults) get(id string) error { return g.why[id] }

// next returns the next non-empty batch of p (a new reference), io.EOF at
// the end.
func (r *result) next(p *part) (arrow.RecordBatch, error) {
	for {
		if p.cur.Next() {
			b := p.cur.RecordBatch()
			if b.NumRows() == 0 {
				continue
			}
			b.Retain()
			return b, nil
		}
		if err := p.cur.Err(); err != nil {
			return nil, err
		}
		if r.more == nil {
			return nil, io.EOF
		}
		p.cur.Release()
		p.cur = nil
		c, err := r.more()
		if err != nil {
			return nil, err
		}
		p.cur = c
	}
}

// stream writes r's batches to a DoGet stream. Each batch is the engine's
// own, labelled with the announced schema (no re-encoding) and sent
// without a copy (codec.go), cut into slices of at most maxMessageBytes so
// that a client's default message limit (4 MiB in gRPC) holds. gRPC lets
// a stream queue one message beyond what its flow-control window lets
// out, so a slow reader holds back the engine: at most two batches wait
// on the server.
func (h *handler) stream(r *result, p *part, s flight.FlightService_DoGetServer) (err error) {
	ctx := s.Context()
	defer func() { h.finish(r, p, err) }()
	stop := context.AfterFunc(ctx, func() { p.cancel(context.Cause(ctx)) })
	defer stop()
	fw := &frameWriter{stream: s}
	w := ipc.NewWriterWithPayloadWriter(fw, ipc.WithSchema(r.schema), ipc.WithAllocator(goAlloc))
	defer w.Close()
	for {
		b, err := r.next(p)
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
