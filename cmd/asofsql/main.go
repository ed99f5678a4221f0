package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/asofsql/asofsql"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `asofsql: a SQL engine with a streaming ASOF JOIN

Usage:
  asofsql serve [flags]   serve the database over the Postgres wire protocol
  asofsql sql [flags]     run SQL statements and print their results
  asofsql demo [flags]    load a generated trading day and tour the ASOF JOIN
  asofsql import [flags] FILE
                          bulk load a CSV or Parquet file into a table

Run "asofsql <command> --help" for a command's flags.
`

// Exit codes: 0 success, 1 a failure while running, 2 bad usage.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// run is the whole program with its environment passed in, so tests run
// each subcommand in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmds := map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{
		"serve":  serveCmd,
		"sql":    sqlCmd,
		"demo":   demoCmd,
		"import": importCmd,
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "asofsql: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	return cmd(ctx, args[1:], stdin, stdout, stderr)
}

// newFlags makes a subcommand's FlagSet that reports errors instead of
// exiting, with a usage text naming the subcommand.
func newFlags(name, synopsis string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: asofsql %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, which must be flags only; done reports that the
// caller should return code (after --help, or on a bad flag). --help
// prints to stdout.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	pos, code, done := parseArgs(fs, args, stdout)
	if !done && len(pos) > 0 {
		fmt.Fprintf(fs.Output(), "asofsql %s: unexpected argument %q\n", fs.Name(), pos[0])
		return exitUsage, true
	}
	return code, done
}

// parseArgs parses args, flags and positional arguments in any order
// ("--" ends the flags), and returns the positional ones.
func parseArgs(fs *flag.FlagSet, args []string, stdout io.Writer) (pos []string, code int, done bool) {
	// The flag package prints usage and errors during Parse; they are
	// captured so that --help goes to stdout and errors to stderr.
	stderr := fs.Output()
	var msg bytes.Buffer
	fs.SetOutput(&msg)
	defer fs.SetOutput(stderr)
	for {
		err := fs.Parse(args)
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				stdout.Write(msg.Bytes())
				return nil, exitOK, true
			}
			stderr.Write(msg.Bytes())
			return nil, exitUsage, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, exitOK, false
		}
		// Parse stops at the first non-flag, or after "--" (then all
		// that follows is positional).
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), exitOK, false
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// storage holds the --data/--memory choice shared by the subcommands.
type storage struct {
	data   string
	memory bool
}

func (s *storage) register(fs *flag.FlagSet) {
	fs.StringVar(&s.data, "data", "", "database `directory` (created if missing)")
	fs.BoolVar(&s.memory, "memory", false, "use a private in-memory database (the default without --data)")
}

// open opens the chosen database; a usage error comes back as such.
func (s *storage) open(opts ...asofsql.Option) (*asofsql.DB, error) {
	if s.data != "" && s.memory {
		return nil, errUsage("--data and --memory are exclusive")
	}
	dsn := ":memory:"
	if s.data != "" {
		dsn = s.data
	}
	return asofsql.Open(dsn, opts...)
}

type usageError string

func errUsage(msg string) error    { return usageError(msg) }
func (e usageError) Error() string { return string(e) }

// fail prints err for subcommand name and returns its exit code.
func fail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "asofsql %s: %v\n", name, err)
	var u usageError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitFail
}
