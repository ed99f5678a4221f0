package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		var se *sqlerr.Error
		if errors.As(err, &se) {
			fmt.Fprintf(os.Stderr, "bench: ERROR %s: %v\n", se.Code, err)
			if se.Detail != "" {
				fmt.Fprintf(os.Stderr, "DETAIL: %s\n", se.Detail)
			}
			if se.Hint != "" {
				fmt.Fprintf(os.Stderr, "HINT: %s\n", se.Hint)
			}
		} else {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		}
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	shapes  []Shape
	scale   float64
	runs    int
	threads []int
	serial  bool
	wire    bool
	cpuProf string
	// -writes: issue 14's write benchmark instead of the join shapes.
	writes   bool
	duration time.Duration
	copyRows int
	// copyFormats are the COPY workloads' formats (binary, text, csv).
	copyFormats []string
	only        string
	// serverBin runs asofsql as a separate serve process (-writes);
	// baselineBin runs a second one in the same run, to compare builds.
	serverBin, baselineBin string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shapes := fs.String("shapes", "all", "comma-separated shapes to run (S1..S6, F1, F2, O1, O2, T1, G1..G3), or the groups asof, ops, all")
	scale := fs.Float64("scale", 1, "multiply every shape's row counts by this (e.g. 0.01 for a quick run)")
	runs := fs.Int("runs", 5, "timed runs per engine and shape; the median is reported")
	threads := fs.String("threads", "1,2", "DuckDB thread counts to run, comma-separated (empty: no DuckDB)")
	serial := fs.Bool("serial", false, "also run asofsql with every right input on one goroutine")
	cpuProf := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (never commit it)")
	wire := fs.Bool("wire", true, "also run S1 through the wire server with pgx (binary and text results)")
	writes := fs.Bool("writes", false, "run the write benchmark (INSERT, transactions, COPY) against asofsql and a private PostgreSQL 15 instead")
	duration := fs.Duration("duration", 5*time.Second, "-writes: how long each INSERT workload runs")
	copyRows := fs.Int("copy-rows", 10_000_000, "-writes: rows of the COPY workload")
	copyFormat := fs.String("copy-format", "binary", "-writes: the COPY workloads' data formats, comma-separated: binary (pgx CopyFrom), text, csv (as psql's \\copy sends a file)")
	only := fs.String("only", "", "-writes: run only the workloads whose name contains this")
	serverBin := fs.String("asofsql-server", "", "-writes: run asofsql as this `binary`'s serve command in its own process, as PostgreSQL runs (default: in the benchmark's process)")
	baselineBin := fs.String("asofsql-baseline", "", "-writes: also run this `binary`'s serve command (another build, e.g. main's) in the same run, interleaved")
	if err := fs.Parse(args); err != nil {
		return config{}, sqlerr.Wrap(err, sqlerr.InvalidParameterValue, "%v", err)
	}
	if fs.NArg() > 0 {
		return config{}, sqlerr.New(sqlerr.InvalidParameterValue, "unexpected argument %q", fs.Arg(0)).
			WithHint("Every option is a flag, e.g. -shapes S1,S3 -runs 5 -scale 0.01.")
	}
	c := config{scale: *scale, runs: *runs, serial: *serial, wire: *wire, cpuProf: *cpuProf,
		writes: *writes, duration: *duration, copyRows: *copyRows, only: *only, serverBin: *serverBin, baselineBin: *baselineBin}
	if !(c.scale > 0 && c.scale <= 100) {
		return c, sqlerr.New(sqlerr.InvalidParameterValue, "-scale must be in (0, 100], got %v", *scale)
	}
	for _, f := range strings.Split(*copyFormat, ",") {
		switch f = strings.TrimSpace(f); f {
		case "binary", "text", "csv":
			c.copyFormats = append(c.copyFormats, f)
		default:
			return c, sqlerr.New(sqlerr.InvalidParameterValue, "bad COPY format %q in -copy-format", f).
				WithHint("Use binary, text or csv, comma-separated.")
		}
	}
	if c.runs < 1 {
		return c, sqlerr.New(sqlerr.InvalidParameterValue, "-runs must be at least 1, got %d", c.runs)
	}
	var err error
	if c.shapes, err = SelectShapes(*shapes); err != nil {
		return c, err
	}
	for _, f := range strings.Split(*threads, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 1024 {
			return c, sqlerr.New(sqlerr.InvalidParameterValue, "bad DuckDB thread count %q in -threads", f).
				WithHint("Use positive integers, e.g. -threads 1,2.")
		}
		c.threads = append(c.threads, n)
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.writes {
		if c.cpuProf != "" {
			f, err := os.Create(c.cpuProf)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		return runWrites(ctx, c.runs, c.duration, c.copyRows, c.copyFormats, c.only, c.serverBin, c.baselineBin, stdout, stderr)
	}
	probe := NewProbe(memory.NewGoAllocator())
	engines := []Engine{&OperatorEngine{}}
	if c.serial {
		engines = append(engines, &OperatorEngine{Serial: true})
	}
	adb := NewAsofDB(probe.Tracker())
	defer adb.Close()
	engines = append(engines, &SQLEngine{DB: adb})
	if c.wire {
		engines = append(engines, &WireEngine{DB: adb, Binary: true}, &WireEngine{DB: adb})
	}
	duckVersion := "not run"
	if len(c.threads) > 0 {
		db, err := OpenDuckDB(ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		if duckVersion, err = db.Version(ctx); err != nil {
			return err
		}
		for _, n := range c.threads {
			engines = append(engines, &DuckDBEngine{DB: db, Threads: n})
		}
	}
	fmt.Fprintf(stdout, "asofsql peer benchmark, %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(stdout, "command: bench %s\n", strings.Join(args, " "))
	fmt.Fprintf(stdout, "%s, GOMAXPROCS %d, %s; DuckDB %s; load average at start: %s\n\n",
		runtime.Version(), runtime.GOMAXPROCS(0), cpuModel(), duckVersion, loadAvg())
	if c.cpuProf != "" {
		f, err := os.Create(c.cpuProf)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	results, err := runShapes(ctx, c, engines, adb, probe, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Median of %d runs; load average at end: %s.\n\n", c.runs, loadAvg())
	WriteTable(stdout, results)
	fmt.Fprintln(stdout, "\nEvery engine gave the same answer in every run:")
	WriteChecks(stdout, results)
	return nil
}

// runShapes runs every selected shape, generating each dataset once for
// the consecutive shapes that share it (the operator shapes all run on
// table t) and finishing the engines and closing adb when it is released.
func runShapes(ctx context.Context, c config, engines []Engine, adb *AsofDB, probe *Probe, log io.Writer) ([]ShapeResult, error) {
	var results []ShapeResult
	var ds *Dataset
	release := func() error {
		if ds == nil {
			return nil
		}
		var err error
		for i := len(engines) - 1; i >= 0; i-- {
			if ferr := engines[i].Finish(); err == nil {
				err = ferr
			}
		}
		if cerr := adb.Close(); err == nil {
			err = cerr
		}
		ds.Release()
		ds = nil
		return err
	}
	defer release()
	for _, s := range c.shapes {
		s = s.Scaled(c.scale)
		if ds != nil && ds.Shape.DataKey() != s.DataKey() {
			if err := release(); err != nil {
				return nil, err
			}
		}
		if ds == nil {
			t0 := time.Now()
			ds = Generate(s, memory.NewGoAllocator())
			fmt.Fprintf(log, "%s: generated %s (%.0f MiB) in %v\n", s.Name, s.DataKey(),
				float64(ds.Bytes())/(1<<20), time.Since(t0).Round(time.Millisecond))
		}
		r, err := RunShape(ctx, s, ds, engines, c.runs, probe, log)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, release()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
