package main

import (
	"fmt"
	"io"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/record"
)

func runReplay(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("replay", stdout, stderr)
	fs := cmd.FS
	var nf nodeFlags
	registerJoinFlags(fs, &nf, "FOM module file (repeatable; default: the recording's modules)")
	speed := fs.Float64("speed", 1, "play X units of logical time per wall-clock second")
	fast := fs.Bool("fast", false, "advance as fast as the federation allows")
	pos, ok := cmd.Files(args, "usage: federate-node replay FILE -federation NAME [join flags] [-speed X | -fast]", func(n int) bool { return n == 1 && *speed > 0 })
	if !ok {
		return 2
	}
	p := &record.Player{Speed: *speed}
	if *fast {
		p.Speed = 0
	}
	nf.role = "replay"
	cfg, err := nf.config()
	if err != nil {
		return cmd.UsageError(err.Error())
	}
	if len(nf.foms) == 0 {
		cfg.FOMModules = nil // the recording's, set by replayFile
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	p.Ready = func(fed *peer.Federate) {
		cli.PrintGossip(stdout, fed)
		fmt.Fprintf(stdout, "replaying %s into %s as %s\n", pos[0], cfg.Federation, fed.Name())
	}
	res, err := p.PlayFile(ctx, cfg, pos[0])
	fmt.Fprintf(stdout, "replayed %d events up to time %v\n", res.Events, res.Time)
	if err != nil {
		return cmd.Fail(err)
	}
	return 0
}
