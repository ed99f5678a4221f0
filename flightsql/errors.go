package flightsql

import (
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/asofsql/asofsql/sqlerr"
)

// ErrorDomain is the Domain of the google.rpc.ErrorInfo detail every error
// status of the server carries; its Reason is the SQLSTATE.
const ErrorDomain = "asofsql"

// Metadata keys of the ErrorInfo detail.
const (
	metaSQLState = "sqlstate"
	metaMessage  = "message"
	metaDetail   = "detail"
	metaHint     = "hint"
	metaPosition = "position"
)

// statusOf turns an error into what the client receives: a gRPC status
// whose code follows the SQLSTATE's class, whose message reads as psql's
// ("message (SQLSTATE 42P01)" then DETAIL and HINT lines), and whose
// details hold an errdetails.ErrorInfo with the SQLSTATE as Reason and the
// fields in its Metadata. Statuses made by the Flight framework (a request
// it could not decode, a call it does not route) keep their code and get
// a SQLSTATE from it.
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := sqlerr.As(err); !ok {
		if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
			if hasErrorInfo(st) {
				return err
			}
			return withInfo(st.Code(), sqlerr.New(stateOfCode(st.Code()), "%s", st.Message()))
		}
	}
	e := sqlerr.From(err)
	return withInfo(codeOf(e), e)
}

func withInfo(code codes.Code, e *sqlerr.Error) error {
	var msg strings.Builder
	msg.WriteString(e.Message)
	msg.WriteString(" (SQLSTATE " + e.Code + ")")
	if e.Detail != "" {
		msg.WriteString("\nDETAIL: " + e.Detail)
	}
	if e.Hint != "" {
		msg.WriteString("\nHINT: " + e.Hint)
	}
	meta := map[string]string{metaSQLState: e.Code, metaMessage: e.Message}
	if e.Detail != "" {
		meta[metaDetail] = e.Detail
	}
	if e.Hint != "" {
		meta[metaHint] = e.Hint
	}
	if e.Position > 0 {
		meta[metaPosition] = strconv.Itoa(e.Position)
	}
	st, derr := status.New(code, msg.String()).WithDetails(&errdetails.ErrorInfo{Reason: e.Code, Domain: ErrorDomain, Metadata: meta})
	if derr != nil {
		return status.Error(code, msg.String())
	}
	return st.Err()
}

func hasErrorInfo(st *status.Status) bool {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == ErrorDomain {
			return true
		}
	}
	return false
}

// codeOf maps a SQLSTATE to the gRPC code that says the same to a generic
// client (ADBC turns these codes into its own status codes).
func codeOf(e *sqlerr.Error) codes.Code {
	c := e.Code
	switch c {
	case sqlerr.QueryCanceled:
		if strings.Contains(e.Message, "statement timeout") {
			return codes.DeadlineExceeded
		}
		return codes.Canceled
	case sqlerr.InsufficientPrivilege:
		return codes.PermissionDenied
	case sqlerr.DuplicateTable, "42710", "42P06":
		return codes.AlreadyExists
	case sqlerr.UndefinedTable, sqlerr.InvalidCatalogName, "3F000", sqlerr.InvalidSQLStatementName, sqlerr.InvalidCursorName:
		return codes.NotFound
	case sqlerr.ProtocolViolation:
		return codes.InvalidArgument
	case sqlerr.AdminShutdown:
		return codes.Unavailable
	}
	if len(c) < 2 {
		return codes.Unknown
	}
	switch c[:2] {
	case "0A":
		return codes.Unimplemented
	case "08":
		return codes.Unavailable
	case "22", "23", "42", "2F", "44":
		return codes.InvalidArgument
	case "25", "55":
		return codes.FailedPrecondition
	case "28":
		return codes.Unauthenticated
	case "40":
		return codes.Aborted
	case "53", "54":
		return codes.ResourceExhausted
	case "57", "58":
		return codes.Unavailable
	case "XX":
		return codes.Internal
	}
	return codes.Unknown
}

// stateOfCode gives a framework status a SQLSTATE.
func stateOfCode(c codes.Code) string {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange:
		return sqlerr.ProtocolViolation
	case codes.Unimplemented:
		return sqlerr.FeatureNotSupported
	case codes.Unauthenticated:
		return "28000"
	case codes.PermissionDenied:
		return sqlerr.InsufficientPrivilege
	case codes.NotFound:
		return sqlerr.UndefinedObject
	case codes.Canceled, codes.DeadlineExceeded:
		return sqlerr.QueryCanceled
	case codes.ResourceExhausted:
		return "54000"
	case codes.Unavailable:
		return sqlerr.ConnectionException
	}
	return sqlerr.InternalError
}

// ErrorOf recovers the *sqlerr.Error a Flight SQL call failed with from
// the gRPC status the server sent (any error the arrow-go client or
// database/sql driver returns, possibly wrapped). It reports false for an
// error that carries no asofsql status: a transport failure, or another
// server.
func ErrorOf(err error) (*sqlerr.Error, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return nil, false
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.GetDomain() != ErrorDomain {
			continue
		}
		m := info.GetMetadata()
		out := &sqlerr.Error{Code: info.GetReason(), Message: m[metaMessage], Detail: m[metaDetail], Hint: m[metaHint]}
		out.Position, _ = strconv.Atoi(m[metaPosition])
		return out, true
	}
	return nil, false
}
