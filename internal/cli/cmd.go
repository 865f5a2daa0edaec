package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"syscall"
)

// A Cmd is what every command, bench kind and demo kind does around its
// work: its flag set, its messages prefixed "federate-node NAME:", its
// exit codes, and its result printed as one JSON line (-json) or as
// text. Each kind defines only its flags, its checks, the work and the
// text.
type Cmd struct {
	Name           string // "bench lifecycle", "demo ddm"
	FS             *flag.FlagSet
	Stdout, Stderr io.Writer
}

// NewCmd starts a command named name ("bench KIND", "demo KIND"): its
// flag set reports errors on stderr.
func NewCmd(name string, stdout, stderr io.Writer) *Cmd {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &Cmd{Name: name, FS: fs, Stdout: stdout, Stderr: stderr}
}

// Parse parses args; false is a usage error (flag printed why).
func (c *Cmd) Parse(args []string) bool { return c.FS.Parse(args) == nil }

// Files parses args, flags standing anywhere among the file names
// (ParseFlagsAnywhere), and returns the names; false after a usage
// error, usage printed when ok refuses the names' count.
func (c *Cmd) Files(args []string, usage string, ok func(n int) bool) ([]string, bool) {
	files, err := ParseFlagsAnywhere(c.FS, args)
	if err != nil {
		return nil, false
	}
	if !ok(len(files)) {
		fmt.Fprintln(c.Stderr, usage)
		return nil, false
	}
	return files, true
}

// UsageError prints msg and returns the exit code of a usage error.
func (c *Cmd) UsageError(msg string) int {
	fmt.Fprintf(c.Stderr, "federate-node %s: %s\n", c.Name, msg)
	return 2
}

// Fail prints err and returns the exit code of a failed run.
func (c *Cmd) Fail(err error) int {
	fmt.Fprintf(c.Stderr, "federate-node %s: %v\n", c.Name, err)
	return 1
}

// Emit prints a result: v as one JSON line when jsonOut, else text.
func (c *Cmd) Emit(jsonOut bool, v any, text func(w io.Writer)) {
	if jsonOut {
		PrintJSON(c.Stdout, v)
		return
	}
	text(c.Stdout)
}

// A Kind is the flag struct F of a bench or demo kind, which is the
// kind's whole definition: Define defines its flags, Check tests their
// values (given the count of arguments left after the flags: the usage
// error, "" when they are good), and Run runs the kind.
type Kind[F any] interface {
	*F
	Define(fs *flag.FlagSet)
	Check(nargs int) string
	Run(c *Cmd) int
}

// KindMain returns the main function of the kind whose flags are F,
// named name ("bench lifecycle"): it makes the flag set, parses it and
// prints the usage error. preset, when not nil, sets flags that are not
// on the command line (what a row of a table stands for).
func KindMain[F any, K Kind[F]](name string, preset func(*F)) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		c := NewCmd(name, stdout, stderr)
		var f F
		if preset != nil {
			preset(&f)
		}
		K(&f).Define(c.FS)
		if !c.Parse(args) {
			return 2
		}
		if msg := K(&f).Check(c.FS.NArg()); msg != "" {
			return c.UsageError(msg)
		}
		return K(&f).Run(c)
	}
}

// The texts of -mcast-port and -frame most bench and demo kinds share.
const (
	PortHelp  = "UDP multicast port (default: derived from the process id)"
	FrameHelp = "data-plane frame size in bytes (1400 fits an Ethernet MTU; loopback takes up to 65000)"
)

// ParseFlagsAnywhere parses fs's flags wherever they stand among args
// and returns the other arguments, in order; those after "--" are taken
// as they are.
func ParseFlagsAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var files, rest []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) > 0 {
			files = append(files, args[0])
			args = args[1:]
		}
	}
	return append(files, rest...), nil
}

// PrintJSON prints v as one JSON object on its own line; the results
// are plain structs, which cannot fail to encode.
func PrintJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s\n", b)
}

// PrintTagged prints v as one JSON object after tag and a space, the
// line a bench's child process reports with.
func PrintTagged(w io.Writer, tag string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s %s\n", tag, b)
}

// StartProfile writes a CPU profile to path until the returned function
// is called; none when path is empty.
func StartProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// SignalContext is the context of a command that runs until it is
// stopped: an interrupt (Ctrl-C) or SIGTERM cancels it. stop releases
// the signals.
func SignalContext() (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// ProfilePath is the profile file of one process of a run profiled to
// prefix: prefix+suffix, or none when prefix is empty.
func ProfilePath(prefix, suffix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + suffix
}

// ExpandFOMs replaces each directory among paths (the values of -fom)
// by the .xml files in it, in name order.
func ExpandFOMs(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		files, err := filepath.Glob(filepath.Join(p, "*.xml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("-fom %s: no .xml files in the directory", p)
		}
		sort.Strings(files)
		out = append(out, files...)
	}
	return out, nil
}
