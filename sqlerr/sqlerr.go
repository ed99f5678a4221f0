package sqlerr

import (
	"context"
	"errors"
	"fmt"
)

// SQLSTATE codes used across the engine. Names follow PostgreSQL's
// errcodes.txt so they can be looked up there.
const (
	SuccessfulCompletion       = "00000"
	Warning                    = "01000"
	ConnectionException        = "08000"
	ProtocolViolation          = "08P01"
	FeatureNotSupported        = "0A000"
	InvalidCatalogName         = "3D000"
	DataException              = "22000"
	StringDataRightTruncation  = "22001"
	NumericValueOutOfRange     = "22003"
	InvalidDatetimeFormat      = "22007"
	DatetimeFieldOverflow      = "22008"
	DivisionByZero             = "22012"
	InvalidParameterValue      = "22023"
	InvalidTextRepresentation  = "22P02"
	BadCopyFileFormat          = "22P04"
	NotNullViolation           = "23502"
	UniqueViolation            = "23505"
	ActiveSQLTransaction       = "25001"
	NoActiveSQLTransaction     = "25P01"
	InFailedSQLTransaction     = "25P02"
	InvalidSQLStatementName    = "26000"
	InvalidPassword            = "28P01"
	InvalidCursorName          = "34000"
	SyntaxError                = "42601"
	InsufficientPrivilege      = "42501"
	UndefinedColumn            = "42703"
	UndefinedFunction          = "42883"
	UndefinedTable             = "42P01"
	UndefinedObject            = "42704"
	DuplicateTable             = "42P07"
	DuplicatePreparedStatement = "42P05"
	AmbiguousColumn            = "42702"
	DatatypeMismatch           = "42804"
	GroupingError              = "42803"
	InvalidColumnReference     = "42P10"
	IndeterminateDatatype      = "42P18"
	OutOfMemory                = "53200"
	ProgramLimitExceeded       = "54000"
	StatementTooComplex        = "54001"
	TooManyConnections         = "53300"
	QueryCanceled              = "57014"
	AdminShutdown              = "57P01"
	IOError                    = "58030"
	InternalError              = "XX000"
	DataCorrupted              = "XX001"
)

// Error is a SQL error. The zero Position means "no position". Severity is
// empty for an ordinary ERROR; the wire edge uses FATAL for connection-level
// failures.
type Error struct {
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int // 1-based character offset into the statement text; 0 if none
	Severity string
	cause    error
}

// New returns an error with the given SQLSTATE and a formatted message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error with the given SQLSTATE and message that keeps cause
// reachable through errors.Unwrap (for example an *os.PathError).
func Wrap(cause error, code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), cause: cause}
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// WithDetail returns a copy of e with the detail set.
func (e *Error) WithDetail(format string, args ...any) *Error {
	c := *e
	c.Detail = fmt.Sprintf(format, args...)
	return &c
}

// WithHint returns a copy of e with the hint set.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	c.Hint = fmt.Sprintf(format, args...)
	return &c
}

// WithPosition returns a copy of e with the 1-based character position set.
func (e *Error) WithPosition(pos int) *Error {
	c := *e
	c.Position = pos
	return &c
}

// WithSeverity returns a copy of e with the severity (ERROR, FATAL, ...) set.
func (e *Error) WithSeverity(s string) *Error {
	c := *e
	c.Severity = s
	return &c
}

// As finds the first *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Code returns the SQLSTATE of err: the code of the first *Error in its
// chain, 57014 for a cancelled context, 57014 for an expired deadline (a
// statement timeout), XX000 for any other non-nil error, and "" for nil.
func Code(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := As(err); ok {
		return e.Code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return QueryCanceled
	}
	return InternalError
}

// From converts any error into an *Error, keeping an existing one (its
// message is the wrapped chain's full text only when it is not the outermost
// error, so context added with %w is not lost). Cancellation becomes 57014
// with PostgreSQL's wording.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := As(err); ok {
		return e
	}
	if errors.Is(err, context.Canceled) {
		return Wrap(err, QueryCanceled, "canceling statement due to user request")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Wrap(err, QueryCanceled, "canceling statement due to statement timeout")
	}
	return Wrap(err, InternalError, "%s", err.Error())
}
