package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/internal/monitor"
	"github.com/meshrti/meshrti/peer"
)

// runMonitor is `federate-node monitor`: a federate that reads the MOM
// and serves the federation's page, JSON and metrics (docs/monitor.md).
func runMonitor(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("monitor", stdout, stderr)
	fs := cmd.FS
	var jf joinFlags
	jf.register(fs)
	addr := fs.String("http", "127.0.0.1:8080", "HTTP address of the page (/), /api/federation, /events and /metrics")
	period := fs.Duration("period", time.Second, "how often to ask the MOM for the federates' values")
	joinTimeout := fs.Duration("join-timeout", 30*time.Second, "give up joining after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cfg, err := jf.config("federate-node/monitor")
	if err != nil {
		return cmd.UsageError(err.Error())
	}
	cfg.AdoptTime = true // whatever time the federation keeps
	ctx, stop := cli.SignalContext()
	defer stop()
	jctx, jcancel := context.WithTimeout(ctx, *joinTimeout)
	fed, err := peer.Join(jctx, cfg)
	jcancel()
	if err != nil {
		return cmd.Fail(fmt.Errorf("join: %w", err))
	}
	defer fed.Close()
	defer func() {
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		if err := fed.ResignFederationExecution(rctx, peer.NoAction); err != nil {
			fmt.Fprintln(stderr, "federate-node monitor: resign:", err)
		}
	}()
	srv, err := startMonitorServer(fed, jf.federation, *addr, *period, func(format string, args ...any) {
		fmt.Fprintf(stderr, format+"\n", args...)
	})
	if err != nil {
		return cmd.Fail(err)
	}
	defer srv.close()
	printJoined(stdout, fed, jf.federation)
	fmt.Fprintf(stdout, "monitor on http://%s/\n", srv.addr)
	<-ctx.Done()
	return 0
}

// monitorServer is a Monitor and the HTTP server of its page.
type monitorServer struct {
	mon  *monitor.Monitor
	http *http.Server
	addr net.Addr
	done chan struct{}
}

// startMonitorServer starts a Monitor on fed and serves it on addr, with
// the process's Go and process metrics beside the monitor's, and those
// of extra (the DIS gateway's, for "dis -http").
func startMonitorServer(fed *peer.Federate, federation, addr string, period time.Duration, logf func(string, ...any), extra ...prometheus.Gatherer) (*monitorServer, error) {
	mon, err := monitor.Start(monitor.Config{Federate: fed, Federation: federation, Period: period, Logf: logf})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		mon.Close()
		return nil, fmt.Errorf("http: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(mon.Collector(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &monitorServer{
		mon:  mon,
		http: &http.Server{Handler: mon.Handler(promhttp.HandlerFor(append(prometheus.Gatherers{reg}, extra...), promhttp.HandlerOpts{})), ReadHeaderTimeout: 10 * time.Second},
		addr: l.Addr(), done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(l)
	}()
	return s, nil
}

// close stops the Monitor (its event streams end), then the server, and
// waits for it.
func (s *monitorServer) close() {
	s.mon.Close()
	s.http.Close()
	<-s.done
}
