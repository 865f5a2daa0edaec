package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro"
)

// HostPages is `serve -http`: the monitor's page for each federation the
// daemon's federates are in. The page of a federation is read by a
// monitor federate of the daemon's, joined when the page is first asked
// for, as any monitor joins (the daemon's federates are its seeds); it
// resigns when none of the daemon's federates is left in the federation
// or nobody asked for the page for idle. While it is joined it is a
// member like any other: destroying the federation waits for it to go.
type HostPages struct {
	host   *fedpro.Host
	period time.Duration
	idle   time.Duration
	logf   func(string, ...any)
	stop   chan struct{}
	wg     sync.WaitGroup

	mu     sync.Mutex
	mons   map[string]*hostMonitor
	closed bool
}

// hostMonitor is one federation's monitor.
type hostMonitor struct {
	fed     *peer.Federate
	mon     *Monitor
	handler http.Handler
	used    time.Time
}

// NewHostPages starts the pages of host's federations; logf gets the
// monitors' log lines. Close ends them.
func NewHostPages(host *fedpro.Host, logf func(string, ...any)) *HostPages {
	w := &HostPages{host: host, period: time.Second, idle: time.Minute, logf: logf,
		stop: make(chan struct{}), mons: map[string]*hostMonitor{}}
	w.wg.Add(1)
	go w.reap()
	return w
}

// reap ends the monitors of federations the daemon no longer has a
// federate in, and of pages nobody looked at for idle.
func (w *HostPages) reap() {
	defer w.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case now := <-t.C:
			feds := w.host.Federations()
			var end []*hostMonitor
			w.mu.Lock()
			for name, m := range w.mons {
				if !slices.Contains(feds, name) || now.Sub(m.used) > w.idle {
					end = append(end, m)
					delete(w.mons, name)
				}
			}
			w.mu.Unlock()
			for _, m := range end {
				m.close()
			}
		}
	}
}

func (m *hostMonitor) close() {
	m.mon.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.fed.ResignFederationExecution(ctx, peer.NoAction)
	m.fed.Close()
}

// Close ends every monitor and waits.
func (w *HostPages) Close() {
	w.mu.Lock()
	w.closed = true
	mons := w.mons
	w.mons = map[string]*hostMonitor{}
	w.mu.Unlock()
	close(w.stop)
	w.wg.Wait()
	for _, m := range mons {
		m.close()
	}
}

// monitor returns federation's monitor, joining it when there is none.
func (w *HostPages) monitor(ctx context.Context, federation string) (*hostMonitor, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, fmt.Errorf("the daemon is stopping")
	}
	if m, ok := w.mons[federation]; ok {
		m.used = time.Now()
		return m, nil
	}
	if !slices.Contains(w.host.Federations(), federation) {
		return nil, fmt.Errorf("no federate of this daemon is in federation %q", federation)
	}
	cfg := w.host.JoinConfig(federation)
	cfg.FederateType = "federate-node/serve-monitor"
	cfg.AdoptTime = true
	jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fed, err := peer.Join(jctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("joining %s: %w", federation, err)
	}
	mon, err := Start(Config{Federate: fed, Federation: federation, Period: w.period, Logf: w.logf})
	if err != nil {
		fed.Close()
		return nil, err
	}
	prefix := "/federation/" + url.PathEscape(federation)
	m := &hostMonitor{fed: fed, mon: mon, handler: http.StripPrefix(prefix, mon.Handler(nil)), used: time.Now()}
	w.mons[federation] = m
	return m, nil
}

var hostIndex = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>meshrti serve</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;color:#1d2430}li{margin:4px 0}</style></head>
<body><h1>meshrti serve: federations</h1>
{{if .}}<ul>{{range .}}<li><a href="federation/{{.Path}}/">{{.Name}}</a></li>{{end}}</ul>
{{else}}<p>No federate of this daemon is joined to a federation.</p>{{end}}
<p>Each page is read by a monitor federate that joins the federation when the page is opened (docs/monitor.md).</p>
</body></html>`))

// ServeHTTP serves the list of federations on / (and as JSON on
// /api/federations), and each one's monitor under /federation/NAME/.
func (w *HostPages) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/":
		type link struct{ Name, Path string }
		var links []link
		for _, f := range w.host.Federations() {
			links = append(links, link{f, url.PathEscape(f)})
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = hostIndex.Execute(rw, links)
	case r.URL.Path == "/api/federations":
		writeHostJSON(rw, map[string][]string{"federations": append([]string{}, w.host.Federations()...)})
	case strings.HasPrefix(r.URL.Path, "/federation/"):
		rest := strings.TrimPrefix(r.URL.EscapedPath(), "/federation/")
		esc, _, found := strings.Cut(rest, "/")
		name, err := url.PathUnescape(esc)
		if err != nil {
			http.NotFound(rw, r)
			return
		}
		if !found {
			http.Redirect(rw, r, "/federation/"+esc+"/", http.StatusFound)
			return
		}
		m, err := w.monitor(r.Context(), name)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusNotFound)
			return
		}
		m.handler.ServeHTTP(rw, r)
	default:
		http.NotFound(rw, r)
	}
}

func writeHostJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(b)
}
