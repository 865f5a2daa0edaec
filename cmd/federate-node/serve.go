package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/internal/monitor"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro"
	"github.com/meshrti/meshrti/peer/fedpro/session"
	"github.com/meshrti/meshrti/peer/transport"
	"github.com/meshrti/meshrti/version"
)

// serveFlags configure `federate-node serve`; a -config file sets them
// too (loadConfig), and flags given on the command line win.
type serveFlags struct {
	Listen, TLSListen, Cert, Key, Metrics string
	HTTP                                  string
	Gossip, Seeds, Iface, FedKey, SaveDir string
	McastPort, TTL                        int
	ResumeWindow, CallTimeout, StepHold   time.Duration
	LostGrace                             time.Duration
	MaxBacklog                            int64
	Transport, Advertise                  string
	Profile                               string
	Trace                                 string
	serveAuthFlags                        // -credentials, -client-ca, -insecure (serve_auth.go)
	logs                                  logFlags
}

func (sf *serveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&sf.Listen, "listen", fmt.Sprintf("127.0.0.1:%d", session.DefaultPort), "Federate Protocol TCP address; empty: none (TLS only)")
	fs.StringVar(&sf.TLSListen, "tls-listen", fmt.Sprintf("127.0.0.1:%d", session.DefaultTLSPort), "Federate Protocol TLS address (with -cert and -key)")
	fs.StringVar(&sf.Cert, "cert", "", "TLS certificate `FILE` (PEM); with -key, serves TLS on -tls-listen")
	fs.StringVar(&sf.Key, "key", "", "TLS private key `FILE` (PEM)")
	fs.StringVar(&sf.Metrics, "metrics", "127.0.0.1:9464", "Prometheus metrics HTTP address (/metrics); empty: none")
	fs.StringVar(&sf.HTTP, "http", "", "HTTP address of the monitor's page of each federation of the daemon's federates (docs/monitor.md); empty: none")
	fs.StringVar(&sf.Gossip, "gossip", "127.0.0.1:0", "the daemon's gossip address: every hosted federate's gossip goes through this one UDP and TCP port (port 0: a free one); 0.0.0.0:7946 to reach other hosts")
	fs.StringVar(&sf.Seeds, "seeds", "", "comma-separated host:port gossip addresses of the daemons (the same list, in the same order, on every daemon; this one may be in it); the first founds every federation (docs/agreement.md)")
	fs.IntVar(&sf.McastPort, "mcast-port", 47470, "UDP multicast port (all members must agree)")
	fs.StringVar(&sf.Iface, "iface", transport.DefaultInterface, "multicast interface (name or one of its IPv4 addresses)")
	fs.IntVar(&sf.TTL, "ttl", 0, "multicast TTL: 0 stays on this host, 1 reaches the local link")
	fs.StringVar(&sf.FedKey, "federation-key", "", "federation key: authenticates frames and encrypts gossip (at least 16 bytes); the same on every member")
	registerProfile(fs, &sf.Profile)
	sf.logs.register(fs)
	fs.StringVar(&sf.SaveDir, "save-dir", "", "directory of federation saves (default: meshrti-saves in the temporary directory)")
	fs.StringVar(&sf.Trace, "trace", "", "write a JSON-lines trace (docs/trace.md) of every hosted federate to `FILE` (their lines carry their names)")
	fs.DurationVar(&sf.ResumeWindow, "resume-window", session.DefaultResumeWindow, "how long a session survives a dropped connection")
	fs.DurationVar(&sf.CallTimeout, "call-timeout", 30*time.Second, "bound on calls that wait on the federation (create, join, resign)")
	fs.Int64Var(&sf.MaxBacklog, "max-backlog", session.DefaultMaxBacklog, "bytes of callbacks a session keeps unacknowledged before it ends (ErrBacklog); negative: no bound")
	registerDataPlane(fs, &sf.Transport, &sf.Advertise)
	registerStepHold(fs, &sf.StepHold)
	registerLostGrace(fs, &sf.LostGrace)
	sf.registerAuth(fs)
}

// loadConfig reads a JSON config file: an object whose keys are the
// flags' names with _ for - ("tls_listen"), whose values are strings,
// numbers or booleans as the flags take them ("resume_window": "90s").
// Flags set on the command line win; an unknown key is an error.
func (sf *serveFlags) loadConfig(path string, fs *flag.FlagSet) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var settings map[string]json.RawMessage
	if err := json.Unmarshal(b, &settings); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		name := strings.ReplaceAll(k, "_", "-")
		if fs.Lookup(name) == nil || name == "config" {
			return fmt.Errorf("%s: unknown setting %q", path, k)
		}
		if set[name] {
			continue
		}
		var v any
		if err := json.Unmarshal(settings[k], &v); err != nil {
			return fmt.Errorf("%s: %s: %w", path, k, err)
		}
		if err := fs.Set(name, fmt.Sprint(v)); err != nil {
			return fmt.Errorf("%s: %s: %w", path, k, err)
		}
	}
	return nil
}

// base is the peer configuration of the hosted federates.
func (sf *serveFlags) base() (peer.Config, error) {
	cfg := peer.Config{
		Multicast: transport.UDPConfig{Port: sf.McastPort, Interface: sf.Iface, TTL: sf.TTL},
		SaveDir:   sf.SaveDir,
		StepHold:  cli.StepHoldFor(sf.StepHold),
	}
	err := cli.JoinNet(&cfg, sf.Gossip, sf.Seeds, sf.FedKey, sf.Transport, sf.Advertise)
	cfg.Gossip.LostGrace = sf.LostGrace
	cfg.Gossip.Profile = sf.Profile
	cfg.Logger = sf.logs.logger("serve")
	return cfg, err
}

// daemon is a running `serve`: the listeners, the session server, the
// host of the federates and the metrics endpoint.
type daemon struct {
	host    *fedpro.Host
	srv     *session.Server
	metrics *http.Server
	addrs   []net.Addr         // the Federate Protocol listeners' addresses
	maddr   net.Addr           // the metrics listener's, when serving
	web     *monitor.HostPages // serve -http: the federations' pages
	webSrv  *http.Server
	waddr   net.Addr
	wg      sync.WaitGroup
	gossip  *fedpro.Gossip // the daemon's gossip address; on the founding daemon, the anchors of its federations
	trace   *traceFile     // serve -trace: the hosted federates' trace
}

// startDaemon starts serving as sf says.
func startDaemon(sf *serveFlags, logf func(string, ...any)) (*daemon, error) {
	base, err := sf.base()
	if err != nil {
		return nil, err
	}
	if err := sf.checkExposure(sf.Cert != "" || sf.Key != "", logf); err != nil {
		return nil, err
	}
	auth, err := sf.authenticator()
	if err != nil {
		return nil, err
	}
	d := &daemon{}
	if sf.Trace != "" {
		if d.trace, err = createTrace(sf.Trace); err != nil {
			return nil, err
		}
		base.Trace = d.trace.w
	}
	if d.gossip, err = fedpro.StartGossip(&base); err != nil {
		d.closeTrace()
		return nil, err
	}
	d.host = fedpro.NewHost(fedpro.Config{Base: base, CallTimeout: sf.CallTimeout, Logf: logf, Authenticate: auth, Federations: d.gossip.Federations})
	d.srv = d.host.NewServer(session.Config{ResumeWindow: sf.ResumeWindow, MaxBacklog: sf.MaxBacklog, Logf: logf})
	var ls []net.Listener
	fail := func(err error) (*daemon, error) {
		for _, l := range ls {
			l.Close()
		}
		if d.metrics != nil {
			d.metrics.Close()
		}
		d.wg.Wait()
		d.srv.Close()
		d.host.Close()
		d.gossip.Close()
		d.closeTrace()
		return nil, err
	}
	if sf.Listen != "" {
		l, err := net.Listen("tcp", sf.Listen)
		if err != nil {
			return fail(err)
		}
		ls = append(ls, l)
	}
	if sf.Cert != "" || sf.Key != "" {
		cert, err := tls.LoadX509KeyPair(sf.Cert, sf.Key)
		if err != nil {
			return fail(fmt.Errorf("TLS: %w", err))
		}
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if err := sf.clientAuth(cfg); err != nil {
			return fail(err)
		}
		tl, err := tls.Listen("tcp", sf.TLSListen, cfg)
		if err != nil {
			return fail(err)
		}
		ls = append(ls, tl)
	} else if sf.ClientCA != "" {
		return fail(errors.New("-client-ca applies to the TLS listener: give -cert and -key too"))
	}
	if len(ls) == 0 {
		return fail(errors.New("no Federate Protocol listener: give -listen, or -cert and -key for -tls-listen"))
	}
	if sf.Metrics != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(d.host.Collector(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		ml, err := net.Listen("tcp", sf.Metrics)
		if err != nil {
			return fail(fmt.Errorf("metrics: %w", err))
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		d.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		d.maddr = ml.Addr()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			_ = d.metrics.Serve(ml)
		}()
	}
	if sf.HTTP != "" {
		wl, err := net.Listen("tcp", sf.HTTP)
		if err != nil {
			return fail(fmt.Errorf("http: %w", err))
		}
		d.web = monitor.NewHostPages(d.host, logf)
		d.webSrv = &http.Server{Handler: d.web, ReadHeaderTimeout: 10 * time.Second}
		d.waddr = wl.Addr()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			_ = d.webSrv.Serve(wl)
		}()
	}
	for _, l := range ls {
		d.addrs = append(d.addrs, l.Addr())
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			_ = d.srv.Serve(l)
		}()
	}
	return d, nil
}

// stop ends every session (their federates resign per their directive),
// then the listeners and the metrics endpoint, and waits for them.
func (d *daemon) stop() {
	if d.web != nil {
		d.web.Close() // the monitors resign first: nothing waits on them
		d.webSrv.Close()
	}
	d.srv.Close()
	d.host.Close()
	if d.metrics != nil {
		d.metrics.Close()
	}
	d.wg.Wait()
	d.gossip.Close()
	d.closeTrace()
}

// closeTrace closes the trace file once every hosted federate is closed.
func (d *daemon) closeTrace() {
	if d.trace != nil {
		d.trace.close()
	}
}

// serveCommands is the table of "federate-node serve": the daemon
// itself (the default row) and "serve passwd".
func serveCommands() []cli.Command {
	return []cli.Command{
		{Name: "", Help: []cli.HelpLine{{Synopsis: "serve [flags]", Text: "the per-host daemon: hosts a federate per HLA 4 Federate Protocol\n" +
			"session (C++, Java, Python federates); 127.0.0.1:15164 (docs/fedpro.md)"}}, Run: runServeDaemon},
		{Name: "passwd", Help: []cli.HelpLine{{Synopsis: "serve passwd NAME", Text: "read a password from stdin, print its line for serve -credentials"}},
			Run: func(args []string, stdout, stderr io.Writer) int {
				return runServePasswd(args, os.Stdin, stdout, stderr)
			}},
	}
}

// runServeDaemon is "federate-node serve [flags]".
func runServeDaemon(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("serve", stdout, stderr)
	fs := cmd.FS
	var sf serveFlags
	sf.register(fs)
	config := fs.String("config", "", "JSON config `FILE`: an object of the flags' settings, names with _ for - (\"resume_window\": \"90s\")")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the daemon to `FILE` until it stops (bench fedpro -cpuprofile)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *config != "" {
		if err := sf.loadConfig(*config, fs); err != nil {
			return cmd.UsageError(err.Error())
		}
	}
	stop, err := cli.StartProfile(*cpuProfile)
	if err != nil {
		return cmd.Fail(err)
	}
	defer stop()
	log := sf.logs.logger("serve")
	d, err := startDaemon(&sf, logf(log))
	if err != nil {
		return cmd.Fail(err)
	}
	fmt.Fprintf(stdout, "gossip %s\n", d.gossip.Mux.Addr())
	if d.gossip.Founder {
		fmt.Fprintln(stdout, "founding daemon: this one")
	} else {
		fmt.Fprintf(stdout, "founding daemon: %s\n", strings.Split(sf.Seeds, ",")[0])
	}
	log.Info().Str("version", version.Release()).Str("gossip", d.gossip.Mux.Addr()).Bool("founding", d.gossip.Founder).Msg("serving")
	for _, a := range d.addrs {
		fmt.Fprintf(stdout, "serving the Federate Protocol on %s\n", a)
	}
	if d.maddr != nil {
		fmt.Fprintf(stdout, "metrics on http://%s/metrics\n", d.maddr)
	}
	if d.waddr != nil {
		fmt.Fprintf(stdout, "federations' pages on http://%s/\n", d.waddr)
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(stdout, "stopping: sessions resign per their directive")
	d.stop()
	return 0
}
