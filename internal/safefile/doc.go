// Package safefile opens the server-side files COPY and asofsql import
// read and write, refusing anything but a regular file, and makes reading
// and writing them observe a context.
//
// # Contract
//
//   - Open and Create refuse a named pipe, device, socket or directory at
//     once with 42501 naming the path and what it is, without blocking:
//     opening a FIFO for reading waits for a writer, forever, in open(2)
//     itself, where no context reaches. The path is checked with stat and
//     then opened non-blocking and without following a final symbolic
//     link, and the opened file must be the regular file that was
//     checked, so swapping the path in between does not get around it.
//   - Create does not truncate until the opened file has passed the check.
//   - Reader, ReaderAt and Writer fail with the context's cause once it
//     ends, checked before each call, so that a long load or unload stops
//     at cancellation (statement_timeout, CancelRequest, shutdown).
//   - Other failures are returned as the os package reports them, for the
//     caller to phrase (58030 in COPY).
//
// # Example
//
//	f, err := safefile.Open(path)
//	if err != nil { ... }
//	defer f.Close()
//	n, err := load(ctx, safefile.Reader(ctx, f))
package safefile
