package main

import (
	"github.com/meshrti/meshrti/internal/monitor"
	"github.com/meshrti/meshrti/peer/fedpro"
)

// serveWeb is `serve -http`: the monitor's page for each federation the
// daemon's federates are in (monitor.HostPages).
type serveWeb struct{ *monitor.HostPages }

func newServeWeb(host *fedpro.Host, logf func(string, ...any)) *serveWeb {
	return &serveWeb{monitor.NewHostPages(host, logf)}
}

// close ends every monitor and waits.
func (w *serveWeb) close() { w.Close() }
