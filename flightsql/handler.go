package flightsql

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
)

// handler implements the Flight SQL server interface over a DB.
type handler struct {
	afsql.BaseServer
	db  *asofsql.DB
	cfg Config
	mem memory.Allocator
	log *slog.Logger

	mu       sync.Mutex
	closed   bool
	conns    map[*conn]struct{}
	results  map[string]*result
	gone     goneResults // guarded by mu
	txns     map[string]*txn
	prepared map[string]*prepared
}

var _ afsql.Server = (*handler)(nil)

// shutdown cancels every result and ends every connection's sessions.
func (h *handler) shutdown() {
	h.mu.Lock()
	h.closed = true
	var taken []*result
	for _, r := range h.results {
		if r.count(partStreaming) > 0 {
			taken = append(taken, r)
		}
	}
	var conns []*conn
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	h.dropWaiting()
	for _, r := range taken {
		r.cancel(errShutdown)
	}
	for _, c := range conns {
		c.close()
	}
}

// BeginTransaction starts a transaction (ActionBeginTransaction).
// Statements naming it run in its session, one at a time.
func (h *handler) BeginTransaction(ctx context.Context, _ afsql.ActionBeginTransactionRequest) ([]byte, error) {
	t, err := h.begin(ctx)
	if err != nil {
		return nil, err
	}
	return []byte(t.id), nil
}

// EndTransaction commits or rolls back (ActionEndTransaction).
func (h *handler) EndTransaction(ctx context.Context, req afsql.ActionEndTransactionRequest) error {
	switch req.GetAction() {
	case afsql.EndTransactionCommit:
		return h.end(ctx, req.GetTransactionId(), true)
	case afsql.EndTransactionRollback:
		return h.end(ctx, req.GetTransactionId(), false)
	}
	return sqlerr.New(sqlerr.ProtocolViolation, "unknown end of transaction action %d", req.GetAction())
}

func errSavepoints() error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "savepoints are not supported")
}

// BeginSavepoint is refused: the engine has no savepoints.
func (h *handler) BeginSavepoint(context.Context, afsql.ActionBeginSavepointRequest) ([]byte, error) {
	return nil, errSavepoints()
}

// EndSavepoint is refused: the engine has no savepoints.
func (h *handler) EndSavepoint(context.Context, afsql.ActionEndSavepointRequest) error {
	return errSavepoints()
}

func errSubstrait() error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "Substrait plans are not supported").WithHint("Send SQL.")
}

func (h *handler) GetFlightInfoSubstraitPlan(context.Context, afsql.StatementSubstraitPlan, *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return nil, errSubstrait()
}

func (h *handler) GetSchemaSubstraitPlan(context.Context, afsql.StatementSubstraitPlan, *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	return nil, errSubstrait()
}

func (h *handler) DoPutCommandSubstraitPlan(context.Context, afsql.StatementSubstraitPlan) (int64, error) {
	return 0, errSubstrait()
}

func (h *handler) CreatePreparedSubstraitPlan(context.Context, afsql.ActionCreatePreparedSubstraitPlanRequest) (afsql.ActionCreatePreparedStatementResult, error) {
	return afsql.ActionCreatePreparedStatementResult{}, errSubstrait()
}

// CancelFlightInfo cancels the result a FlightInfo describes: one waiting
// for its DoGet is dropped, one being fetched ends with 57014.
func (h *handler) CancelFlightInfo(ctx context.Context, req *flight.CancelFlightInfoRequest) (flight.CancelFlightInfoResult, error) {
	st, err := h.cancelInfo(ctx, req.GetInfo())
	return flight.CancelFlightInfoResult{Status: st}, err
}

func (h *handler) cancelInfo(ctx context.Context, info *flight.FlightInfo) (flight.CancelStatus, error) {
	st := flight.CancelStatusNotCancellable
	if info == nil || len(info.GetEndpoint()) == 0 {
		return st, sqlerr.New(sqlerr.ProtocolViolation, "CancelFlightInfo without a FlightInfo endpoint")
	}
	user := userOf(ctx)
	for _, ep := range info.GetEndpoint() {
		id, _, ok, err := decodeTicket(ep.GetTicket().GetTicket())
		if err != nil {
			return st, err
		}
		if !ok {
			return st, errBadTicket()
		}
		if h.cancelResult(id, user) {
			st = flight.CancelStatusCancelled
		}
	}
	return st, nil
}

// RenewFlightEndpoint extends the expiration time of a result waiting for
// its DoGet.
func (h *handler) RenewFlightEndpoint(ctx context.Context, req *flight.RenewFlightEndpointRequest) (*flight.FlightEndpoint, error) {
	ep := req.GetEndpoint()
	id, _, ok, err := decodeTicket(ep.GetTicket().GetTicket())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errBadTicket()
	}
	exp, err := h.renew(id, userOf(ctx))
	if err != nil {
		return nil, err
	}
	return &flight.FlightEndpoint{Ticket: ep.GetTicket(), Location: ep.GetLocation(),
		ExpirationTime: timestamppb.New(exp), AppMetadata: ep.GetAppMetadata()}, nil
}

// SetSessionOptions sets run-time settings of the connection's session
// (TimeZone, statement_timeout, ...), as SET does; they last until the
// connection closes or CloseSession.
func (h *handler) SetSessionOptions(ctx context.Context, req *flight.SetSessionOptionsRequest) (*flight.SetSessionOptionsResult, error) {
	sess, err := h.connSession(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.release()
	out := &flight.SetSessionOptionsResult{Errors: map[string]*flight.SetSessionOptionsResultError{}}
	for name, v := range req.GetSessionOptions() {
		val, ok := optionText(v)
		if !ok {
			out.Errors[name] = &flight.SetSessionOptionsResultError{Value: flight.SetSessionOptionsResultErrorInvalidValue}
			continue
		}
		if err := sess.s.Set(name, val); err != nil {
			kind := flight.SetSessionOptionsResultErrorInvalidValue
			if sqlerr.Code(err) == sqlerr.UndefinedObject {
				kind = flight.SetSessionOptionsResultErrorInvalidName
			}
			out.Errors[name] = &flight.SetSessionOptionsResultError{Value: kind}
		}
	}
	return out, nil
}

// connSession acquires the caller's connection session; release it.
func (h *handler) connSession(ctx context.Context) (*session, error) {
	sess, err := h.scope(ctx, nil)
	if err != nil {
		return nil, err
	}
	if err := sess.acquire(ctx); err != nil {
		return nil, err
	}
	return sess, nil
}

// optionText spells a session option value as SET would take it.
func optionText(v *flight.SessionOptionValue) (string, bool) {
	switch x := v.GetOptionValue().(type) {
	case *pb.SessionOptionValue_StringValue:
		return x.StringValue, true
	case *pb.SessionOptionValue_BoolValue:
		return strconv.FormatBool(x.BoolValue), true
	case *pb.SessionOptionValue_Int64Value:
		return strconv.FormatInt(x.Int64Value, 10), true
	case *pb.SessionOptionValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64), true
	case *pb.SessionOptionValue_StringListValue_:
		return strings.Join(x.StringListValue.GetValues(), ", "), true
	}
	return "", false
}

// GetSessionOptions lists the connection session's settings (SHOW ALL).
func (h *handler) GetSessionOptions(ctx context.Context, _ *flight.GetSessionOptionsRequest) (*flight.GetSessionOptionsResult, error) {
	sess, err := h.connSession(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.release()
	cur, err := sess.s.Query(ctx, "SHOW ALL")
	if err != nil {
		return nil, err
	}
	defer cur.Release()
	out := &flight.GetSessionOptionsResult{SessionOptions: map[string]*flight.SessionOptionValue{}}
	for cur.Next() {
		b := cur.RecordBatch()
		names, vals := b.Column(0), b.Column(1)
		for i := 0; i < int(b.NumRows()); i++ {
			out.SessionOptions[names.ValueStr(i)] = &flight.SessionOptionValue{
				OptionValue: &pb.SessionOptionValue_StringValue{StringValue: vals.ValueStr(i)}}
		}
	}
	return out, cur.Err()
}

// CloseSession ends the connection's session: settings return to the
// server's defaults and an open SQL transaction block rolls back.
func (h *handler) CloseSession(ctx context.Context, _ *flight.CloseSessionRequest) (*flight.CloseSessionResult, error) {
	c, err := connOf(ctx)
	if err != nil {
		return nil, err
	}
	c.resetSession(userOf(ctx))
	return &flight.CloseSessionResult{Status: flight.CloseSessionResultClosed}, nil
}

// DoPutCommandStatementIngest loads the Arrow record batches of the
// stream into a table (CommandStatementIngest), all or nothing.
func (h *handler) DoPutCommandStatementIngest(ctx context.Context, cmd afsql.StatementIngest, rdr flight.MessageReader) (int64, error) {
	n, err := h.ingest(ctx, cmd, rdr)
	if err != nil {
		// Read what the client still sends before failing: a client that
		// finds the stream closed while writing may not ask for the
		// status (arrow-go's, with dictionary columns).
		for ctx.Err() == nil && rdr.Next() {
		}
	}
	return n, err
}

func (h *handler) ingest(ctx context.Context, cmd afsql.StatementIngest, rdr flight.MessageReader) (int64, error) {
	if cmd.GetTemporary() {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "temporary tables are not supported")
	}
	if c := cmd.GetCatalog(); c != "" && c != h.cfg.Database {
		return 0, sqlerr.New(sqlerr.InvalidCatalogName, "database %q does not exist", c)
	}
	if s := cmd.GetSchema(); s != "" && s != publicSchema {
		return 0, sqlerr.New("3F000", "schema %q does not exist", s)
	}
	opts := asofsql.IngestOptions{}
	def := cmd.GetTableDefinitionOptions()
	switch def.GetIfNotExist() {
	case afsql.TableDefinitionOptionsTableNotExistOptionCreate:
		opts.Create = true
	case afsql.TableDefinitionOptionsTableNotExistOptionUnspecified, afsql.TableDefinitionOptionsTableNotExistOptionFail:
	default:
		return 0, sqlerr.New(sqlerr.ProtocolViolation, "unknown if_not_exist option %d", def.GetIfNotExist())
	}
	switch def.GetIfExists() {
	case afsql.TableDefinitionOptionsTableExistsOptionFail:
		opts.FailIfExists = true
	case afsql.TableDefinitionOptionsTableExistsOptionReplace:
		opts.Replace = true
	case afsql.TableDefinitionOptionsTableExistsOptionUnspecified, afsql.TableDefinitionOptionsTableExistsOptionAppend:
	default:
		return 0, sqlerr.New(sqlerr.ProtocolViolation, "unknown if_exists option %d", def.GetIfExists())
	}
	for k, v := range cmd.GetOptions() {
		if k != OptionOrderBy {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized ingest option %q", k).
				WithHint("The only option is %q.", OptionOrderBy)
		}
		for _, col := range strings.Split(v, ",") {
			if col = strings.TrimSpace(col); col != "" {
				opts.OrderBy = append(opts.OrderBy, col)
			}
		}
	}
	sess, err := h.scope(ctx, cmd.GetTransactionId())
	if err != nil {
		return 0, err
	}
	if err := sess.acquire(ctx); err != nil {
		return 0, err
	}
	defer sess.release()
	res, err := sess.s.Ingest(ctx, cmd.GetTable(), &ingestReader{MessageReader: rdr}, opts)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected, nil
}

// OptionOrderBy is the ingest option (CommandStatementIngest.options)
// that gives a table the ingest creates its ordering: a comma-separated
// list of columns, as in CREATE TABLE ... ORDER BY.
const OptionOrderBy = "asofsql.order_by"

// ingestReader reports a broken client stream as a protocol error.
type ingestReader struct{ flight.MessageReader }

func (r *ingestReader) Err() error {
	if err := r.MessageReader.Err(); err != nil {
		if _, ok := sqlerr.As(err); ok {
			return err
		}
		return sqlerr.Wrap(err, sqlerr.ProtocolViolation, "reading the ingested Arrow stream: %v", err)
	}
	return nil
}

func (h *handler) logPanic(method string, v any) error {
	h.log.Error("panic in Flight SQL call", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return sqlerr.New(sqlerr.InternalError, "internal error in %s", method)
}
