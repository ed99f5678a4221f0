package asofsql

import (
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/asofsql/asofsql/exec/memacct"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// setting is one run-time parameter a session knows. set validates a new
// value and applies it to the session, returning the value SHOW prints;
// nil set means the parameter is reported but cannot be changed.
type setting struct {
	name  string // Postgres' canonical spelling (SHOW's column name)
	def   string
	desc  string
	set   func(s *Session, v string) (string, error)
	fixed bool // changing it is 55P02 even to its current value
	// txn marks the settings of the current transaction
	// (transaction_isolation, ...): SHOW reads them from the session's
	// transaction state, and RESET ALL leaves them alone, as in Postgres.
	txn func(s *Session) string
}

var settings = func() map[string]*setting {
	list := []*setting{
		{name: "application_name", def: "", desc: "Sets the application name to be reported in statistics and logs.",
			set: func(_ *Session, v string) (string, error) { return v, nil }},
		{name: "client_encoding", def: "UTF8", desc: "Sets the client's character set encoding.",
			set: func(_ *Session, v string) (string, error) {
				switch strings.ToUpper(strings.ReplaceAll(v, "-", "")) {
				case "UTF8", "UNICODE":
					return "UTF8", nil
				}
				return "", sqlerr.New(sqlerr.FeatureNotSupported, "conversion between %s and UTF8 is not supported", v).
					WithHint("asofsql speaks UTF8 only.")
			}},
		{name: "DateStyle", def: "ISO, MDY", desc: "Sets the display format for date and time values.",
			set: func(_ *Session, v string) (string, error) {
				// ISO output with MDY input order is the only style
				// implemented; accept any spelling of it.
				for _, part := range strings.Split(v, ",") {
					switch strings.ToLower(strings.TrimSpace(part)) {
					case "iso", "mdy", "us", "noneuropean", "default":
						continue
					}
					return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"DateStyle\": \"%s\"", v).
						WithDetail("Only the ISO, MDY date style is supported.")
				}
				return "ISO, MDY", nil
			}},
		{name: "extra_float_digits", def: "1", desc: "Sets the number of digits displayed for floating-point values.",
			set: func(s *Session, v string) (string, error) {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"extra_float_digits\": \"%s\"", v)
				}
				if n < -15 || n > 3 {
					return "", sqlerr.New(sqlerr.InvalidParameterValue,
						"%d is outside the valid range for parameter \"extra_float_digits\" (-15 .. 3)", n)
				}
				s.vopts.ExtraFloatDigits = n
				return strconv.Itoa(n), nil
			}},
		{name: "IntervalStyle", def: "postgres", desc: "Sets the display format for interval values.",
			set: func(_ *Session, v string) (string, error) {
				if strings.EqualFold(strings.TrimSpace(v), "postgres") {
					return "postgres", nil
				}
				return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"IntervalStyle\": \"%s\"", v).
					WithDetail("Only the postgres interval style is supported.")
			}},
		{name: "search_path", def: `"$user", public`, desc: "Sets the schema search order for names that are not schema-qualified.",
			// Accepted for client compatibility: asofsql has one schema.
			set: func(_ *Session, v string) (string, error) { return v, nil }},
		{name: "standard_conforming_strings", def: "on", desc: "Causes '...' strings to treat backslashes literally.",
			set: func(_ *Session, v string) (string, error) {
				if b, ok := parseBool(v); ok && b {
					return "on", nil
				}
				return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"standard_conforming_strings\": \"%s\"", v).
					WithDetail("Only standard_conforming_strings = on is supported.")
			}},
		{name: "statement_timeout", def: "0", desc: "Sets the maximum allowed duration of any statement.",
			set: timeoutSetting("statement_timeout", func(s *Session, d time.Duration) { s.timeout = d })},
		{name: "idle_in_transaction_session_timeout", def: "0", desc: "Sets the maximum allowed idle time between queries, when in a transaction.",
			// Enforced by the wire server, which waits for the client; the
			// embedded API only records it.
			set: timeoutSetting("idle_in_transaction_session_timeout", nil)},
		{name: "idle_session_timeout", def: "0", desc: "Sets the maximum allowed idle time between queries, when not in a transaction.",
			set: timeoutSetting("idle_session_timeout", nil)},
		{name: "memory_limit", def: "0", desc: "Sets the memory each query may use; 0 means no limit.",
			// DuckDB's name; Postgres spills to disk where we fail with 53200.
			set: func(s *Session, v string) (string, error) {
				n, err := parseMemory(v)
				if err != nil {
					return "", err
				}
				if c := s.db.opts.memoryLimit; c > 0 && (n == 0 || n > c) {
					// The server's limit is a ceiling, as a PGC_SUSET
					// parameter is for a role that is not superuser.
					return "", sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to set parameter \"memory_limit\" to %s", strings.TrimSpace(v)).
						WithDetail("The server's memory limit is %s; a session may lower memory_limit but not raise it or set it to 0.", formatMemory(c))
				}
				s.memLimit = n
				return formatMemory(n), nil
			}},
		// def is only a fallback: a session starts at the database's
		// degree (DB.workers: WithWorkers, or GOMAXPROCS).
		{name: "max_parallel_workers_per_gather", def: "1",
			desc: "Sets the maximum number of parallel processes per executor node.",
			// Postgres' name for the degree a query runs at; as there, 0
			// turns parallelism off (so does 1: the query's own worker).
			set: func(s *Session, v string) (string, error) {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return "", sqlerr.New(sqlerr.InvalidParameterValue,
						"invalid value for parameter \"max_parallel_workers_per_gather\": \"%s\"", v)
				}
				if n < 0 || n > maxWorkers {
					return "", sqlerr.New(sqlerr.InvalidParameterValue,
						"%d is outside the valid range for parameter \"max_parallel_workers_per_gather\" (0 .. %d)", n, maxWorkers)
				}
				s.workers = n
				return strconv.Itoa(n), nil
			}},
		{name: "min_parallel_table_scan_size", def: "8MB",
			desc: "Sets the minimum amount of table data for a parallel scan.",
			// The planner's judgement (parallel_settings.go): smaller
			// inputs get serial plans.
			set: func(s *Session, v string) (string, error) {
				n, err := parseBlocks("min_parallel_table_scan_size", v)
				if err != nil {
					return "", err
				}
				s.minParallel = n
				return formatMemory(n), nil
			}},
		{name: "TimeZone", def: "UTC", desc: "Sets the time zone for displaying and interpreting time stamps.",
			set: func(s *Session, v string) (string, error) {
				loc, err := sqltypes.ParseTimeZone(v)
				if err != nil {
					return "", err
				}
				s.vopts.Location = loc
				return loc.String(), nil
			}},
		{name: "default_transaction_read_only", def: "off", desc: "Sets the default read-only status of new transactions.",
			set: boolSetting("default_transaction_read_only", nil)},
		{name: "default_transaction_deferrable", def: "off", desc: "Sets the default deferrable status of new transactions.",
			set: boolSetting("default_transaction_deferrable", nil)},
		{name: "default_transaction_isolation", def: isoReadCommitted, desc: "Sets the transaction isolation level of each new transaction.",
			set: func(_ *Session, v string) (string, error) { return parseIsolation("default_transaction_isolation", v) }},
		{name: "transaction_isolation", def: isoReadCommitted, desc: "Sets the current transaction's isolation level.",
			set: func(s *Session, v string) (string, error) {
				iso, err := parseIsolation("transaction_isolation", v)
				if err != nil {
					return "", err
				}
				return iso, s.setIsolation(iso)
			},
			txn: func(s *Session) string { return s.modes().iso }},
		{name: "transaction_read_only", def: "off", desc: "Sets the current transaction's read-only status.",
			set: boolSetting("transaction_read_only", (*Session).setReadOnly),
			txn: func(s *Session) string { return onOff(s.modes().readOnly) }},
		{name: "transaction_deferrable", def: "off", desc: "Whether to defer a read-only serializable transaction until it can be executed with no possible serialization failures.",
			set: boolSetting("transaction_deferrable", (*Session).setDeferrable),
			txn: func(s *Session) string { return onOff(s.modes().deferrable) }},
		{name: "synchronous_commit", def: "on", desc: "Sets the current transaction's synchronization level.",
			// on: COMMIT returns once the commit's log record is on disk.
			// off: once it is ordered in the log and visible; a crash
			// within about 10 ms of it may lose it (never part of it).
			// PostgreSQL's replication levels mean on without replicas.
			set: func(_ *Session, v string) (string, error) {
				w := strings.ToLower(strings.TrimSpace(v))
				switch w {
				case "local", "remote_write", "remote_apply":
					return w, nil
				}
				if b, ok := parseBool(v); ok {
					if b {
						return "on", nil
					}
					return "off", nil
				}
				return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"synchronous_commit\": \"%s\"", v).
					WithHint("Available values: local, remote_write, remote_apply, on, off.")
			}},
		{name: "server_version", def: "15.0", desc: "Shows the server version.", fixed: true},
		{name: "server_encoding", def: "UTF8", desc: "Shows the server (database) character set encoding.", fixed: true},
		{name: "integer_datetimes", def: "on", desc: "Shows whether datetimes are integer based.", fixed: true},
		{name: "is_superuser", def: "off", desc: "Shows whether the current user is a superuser.", fixed: true},
	}
	m := map[string]*setting{}
	for _, s := range list {
		m[strings.ToLower(s.name)] = s
	}
	return m
}()

// settingNames lists the settings in SHOW ALL order (by name, as Postgres).
func settingNames() []string {
	names := make([]string, 0, len(settings))
	for k := range settings {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func lookupSetting(name string) (*setting, error) {
	st, ok := settings[strings.ToLower(name)]
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter \"%s\"", name)
	}
	return st, nil
}

// boolSetting is the set function of a Boolean setting; apply, when not
// nil, takes the new value into effect.
func boolSetting(name string, apply func(*Session, bool) error) func(*Session, string) (string, error) {
	return func(s *Session, v string) (string, error) {
		b, ok := parseBool(v)
		if !ok {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "parameter \"%s\" requires a Boolean value", name)
		}
		if apply != nil {
			if err := apply(s, b); err != nil {
				return "", err
			}
		}
		return onOff(b), nil
	}
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1", "t", "y":
		return true, true
	case "off", "false", "no", "0", "f", "n":
		return false, true
	}
	return false, false
}

// timeoutSetting is the set function of a time setting in milliseconds
// (statement_timeout and the idle timeouts); apply, when not nil, stores
// the parsed value in the session.
func timeoutSetting(name string, apply func(*Session, time.Duration)) func(*Session, string) (string, error) {
	return func(s *Session, v string) (string, error) {
		d, err := parseTimeout(name, v)
		if err != nil {
			return "", err
		}
		if apply != nil {
			apply(s, d)
		}
		return formatTimeout(d), nil
	}
}

// parseTimeout reads a time setting such as statement_timeout:
// milliseconds, or a number with a unit (us, ms, s, min, h, d) as Postgres
// accepts.
func parseTimeout(name, v string) (time.Duration, error) {
	bad := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", name, v)
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || (i == 0 && (s[i] == '-' || s[i] == '+'))) {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, bad
	}
	unit := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
		"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	u, ok := unit[strings.TrimSpace(s[i:])]
	if !ok {
		return 0, bad.WithHint("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".")
	}
	if num < 0 || num*float64(u) > float64(int64(^uint32(0)>>1))*float64(time.Millisecond) {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue,
			"%s ms is outside the valid range for parameter \"%s\" (0 .. 2147483647)", s[:i], name)
	}
	return time.Duration(num * float64(u)), nil
}

// formatTimeout prints a timeout as SHOW does: the largest exact unit.
func formatTimeout(d time.Duration) string {
	ms := d.Milliseconds()
	switch {
	case ms == 0:
		return "0"
	case ms%(24*3600*1000) == 0:
		return strconv.FormatInt(ms/(24*3600*1000), 10) + "d"
	case ms%(3600*1000) == 0:
		return strconv.FormatInt(ms/(3600*1000), 10) + "h"
	case ms%(60*1000) == 0:
		return strconv.FormatInt(ms/(60*1000), 10) + "min"
	case ms%1000 == 0:
		return strconv.FormatInt(ms/1000, 10) + "s"
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// memoryUnits are Postgres' memory units (powers of 1024, case-sensitive),
// largest first.
var memoryUnits = []struct {
	name string
	n    int64
}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}}

// parseMemory reads a memory_limit value: a whole number with an optional
// Postgres unit (B, kB, MB, GB, TB; bytes without one); 0 is no limit.
func parseMemory(v string) (int64, error) {
	bad := func() error {
		return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"memory_limit\": \"%s\"", v).
			WithHint("Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".")
	}
	t := strings.TrimSpace(v)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, bad()
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, bad()
	}
	unit := strings.TrimSpace(t[i:])
	mult := int64(1)
	if unit != "" {
		found := false
		for _, u := range memoryUnits {
			if u.name == unit {
				mult, found = u.n, true
				break
			}
		}
		if !found {
			return 0, bad()
		}
	}
	if n > (1<<63-1)/mult {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "%s is outside the valid range for parameter \"memory_limit\"", t)
	}
	return n * mult, nil
}

// ParseMemoryLimit reads a memory_limit value as SET does: a whole number
// with an optional Postgres unit (B, kB, MB, GB, TB), 0 for no limit. The
// command line's --memory-limit uses it, so both accept the same values.
func ParseMemoryLimit(v string) (int64, error) { return parseMemory(v) }

// FormatMemoryLimit prints a byte count as SHOW memory_limit does.
func FormatMemoryLimit(n int64) string { return formatMemory(n) }

// formatMemory prints a byte count in the largest unit that divides it, as
// SHOW prints Postgres' memory settings ("64MB", "1536kB").
func formatMemory(n int64) string { return memacct.FormatBytes(n) }

// settingName spells a setting's name as SHOW's column does; an unknown
// name stays as written (SHOW then fails with 42704).
func settingName(name string) string {
	if st, err := lookupSetting(name); err == nil {
		return st.name
	}
	return name
}

// syncCommit reports whether COMMIT waits for the log flush
// (synchronous_commit); read at commit time, as PostgreSQL does.
func (s *Session) syncCommit() bool { return s.values["synchronous_commit"] != "off" }

// maxWorkers is Postgres' upper bound for max_parallel_workers_per_gather.
const maxWorkers = 1024

// AllCores is the degree of parallelism that uses every core the Go
// runtime may use (GOMAXPROCS), for WithWorkers and serve --workers 0.
func AllCores() int { return min(runtime.GOMAXPROCS(0), maxWorkers) }
