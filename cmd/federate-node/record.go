package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/record"
)

// joinFlagNames are the flags of "node" that say how to join a
// federation; record and replay take the same ones.
var joinFlagNames = []string{"federation", "name", "fom", "gossip", "seeds", "mcast-port", "federation-key", "key", "profile", "create", "iface", "ttl", "frame", "log-level", "log-format", "cpuprofile"}

// registerJoinFlags registers node's join flags on fs, parsed into nf by
// node's own flag code; fomUsage says where the modules come from when
// -fom is not given.
func registerJoinFlags(fs *flag.FlagSet, nf *nodeFlags, fomUsage string) {
	all := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	all.SetOutput(fs.Output()) // the -key warning and the log go where fs's messages go
	nf.register(all)
	for _, name := range joinFlagNames {
		f := all.Lookup(name)
		usage := f.Usage
		if name == "fom" {
			usage = fomUsage
		}
		fs.Var(f.Value, f.Name, usage)
	}
}

// recordCommands is the table of "federate-node record": the recorder
// itself (the default row) and "record show".
func recordCommands() []cli.Command {
	return []cli.Command{
		{Name: "", Help: []cli.HelpLine{{Synopsis: "record -federation NAME [join flags] -o FILE [-classes A,B] [-interactions X,Y] [-until T]", Text: "record a federation's discoveries, updates, interactions and removals\n" +
			"in time-stamp order, until interrupted (docs/record.md)"}}, Run: runRecorder},
		{Name: "show", Help: []cli.HelpLine{{Synopsis: "record show FILE [-json]", Text: "print a recording, values decoded through its FOM"}}, Run: runRecordShow},
	}
}

// runRecorder is "federate-node record -o FILE ...".
func runRecorder(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("record", stdout, stderr)
	fs := cmd.FS
	var nf nodeFlags
	registerJoinFlags(fs, &nf, "FOM module file (repeatable; default: the federation's modules, or the demo FOM with -create)")
	out := fs.String("o", "", "write the recording to `FILE` (required)")
	classes := fs.String("classes", "", "comma-separated object classes to record (default: every class but the MOM's)")
	interactions := fs.String("interactions", "", "comma-separated interaction classes to record (default: every class but the MOM's)")
	until := fs.String("until", "", "stop once granted this logical time (default: run until interrupted)")
	stats := fs.Bool("stats", false, "print a line \"stats {JSON}\" at the end: events, updates, their sustained rate, bytes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: federate-node record -federation NAME [join flags] -o FILE [-classes A,B] [-interactions X,Y] [-until T]")
		return 2
	}
	rec := &record.Recorder{Classes: splitList(*classes), Interactions: splitList(*interactions)}
	if *until != "" {
		t, err := strconv.ParseFloat(*until, 64)
		if err != nil || math.IsNaN(t) {
			fmt.Fprintf(stderr, "federate-node record: -until %q is not a time\n", *until)
			return 2
		}
		rec.Until, rec.HasUntil = t, true
	}
	nf.role = "record"
	cfg, err := nf.config()
	if err != nil {
		return cmd.UsageError(err.Error())
	}
	if len(nf.foms) == 0 && !nf.create {
		cfg.FOMModules = nil // join with the federation's FDD
	}
	cfg.AdoptTime = true
	stopProfile, err := cli.StartProfile(nf.cpuprofile)
	if err != nil {
		return cmd.Fail(err)
	}
	defer stopProfile()
	ctx, stop := cli.SignalContext()
	defer stop()
	rec.Ready = func(fed *peer.Federate) {
		cli.PrintGossip(stdout, fed)
		fmt.Fprintf(stdout, "recording %s as %s to %s\n", nf.federation, fed.Name(), *out)
	}
	st, err := rec.RecordFile(ctx, cfg, *out)
	if err != nil {
		return cmd.Fail(err)
	}
	fmt.Fprintf(stdout, "recorded %d events to %s\n", st.Events, *out)
	if *stats {
		b, _ := json.Marshal(st)
		fmt.Fprintf(stdout, "stats %s\n", b)
	}
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
