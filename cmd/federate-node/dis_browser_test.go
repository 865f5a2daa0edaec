package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/meshrti/meshrti/dis"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/internal/monitor"
	"github.com/meshrti/meshrti/peer"
)

// mapDot is an entity's dot as the page draws it, with the map's bounds.
type mapDot struct {
	Lat, Lon, CX, CY         float64
	West, East, South, North float64
	Fill, Label              string
	Width, Height            float64
}

const readDot = `(m => { const g = document.querySelector('#map g.entity[data-marking="' + m + '"]'); if (!g) return null;
	const svg = document.getElementById("map"), c = g.querySelector("circle"), vb = svg.viewBox.baseVal;
	return { lat: +g.dataset.lat, lon: +g.dataset.lon, cx: +c.getAttribute("cx"), cy: +c.getAttribute("cy"),
		west: +svg.dataset.west, east: +svg.dataset.east, south: +svg.dataset.south, north: +svg.dataset.north,
		fill: c.getAttribute("fill"), label: g.querySelector("text").textContent, width: vb.width, height: vb.height } })`

// The map in a real browser: an entity sent as DIS PDUs, through the
// gateway, appears at its place (its latitude and longitude on WGS84,
// drawn where the map's projection puts them), in its force's colour,
// labelled with its marking, and moves when it moves; the gateway's
// counters are on the page; nothing comes from the internet.
func TestMonitorBrowserDIS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a federation and a browser")
	}
	dir := rprDir(t)
	browser := needBrowser(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	f := newMonFed(t, 71)
	cfg := f.config("dis-gateway")
	cfg.FOMFiles, cfg.FOMModules = files, []*fomxml.Document{dis.StatusModule()}
	jctx, jcancel := context.WithTimeout(f.ctx, 30*time.Second)
	gwFed, err := peer.Join(jctx, cfg)
	jcancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gwFed.Close() })
	a, _ := gwFed.GossipAddr()
	f.seeds = []string{a}
	gw, err := dis.New(dis.Config{Federate: gwFed, DIS: "127.0.0.1:0", Exercise: 1, Site: 5, Application: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	base, _ := f.monitorOn()

	conn, err := dis.Dial(gw.ListenAddr(), "lo")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A DIS simulator's entity, twice a second, at the place in at.
	at := make(chan [2]float64, 1)
	at <- [2]float64{43.6045, 1.4440}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		es := &dis.EntityState{Header: dis.Header{Exercise: 1}, ID: dis.EntityID{Site: 1, Application: 1, Entity: 9}, Force: 2,
			Type: dis.EntityType{Kind: 1, Domain: 1, Country: 225, Category: 1}, Marking: dis.NewMarking("BROWSER-1"),
			DeadReckoning: dis.DeadReckoning{Algorithm: dis.DRStatic}}
		var buf []byte
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		pos := <-at
		for {
			select {
			case p := <-at:
				pos = p
			default:
			}
			es.Location = dis.FromGeodetic(pos[0], pos[1], 150)
			buf, _ = conn.Send(es, buf)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { stop(); <-done }()
	waitFederation(t, base, "the entity in the JSON", 20*time.Second, func(s monitor.Federation) bool {
		return len(s.Entities) == 1 && s.Entities[0].Marking == "BROWSER-1" && len(s.Gateways) == 1
	})

	cctx, closeBrowser := openBrowser(browser, 1400, 1400)
	defer closeBrowser()
	if err := chromedp.Do(cctx, chromedp.Navigate(base),
		chromedp.WaitReady(chromedp.CSS(`#map g.entity[data-marking="BROWSER-1"]`))); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	// dotAt waits until the dot is at lat, lon, and checks that it is
	// drawn where the map's projection puts that place.
	dotAt := func(lat, lon float64) mapDot {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			d, err := chromedp.Run(cctx, chromedp.Evaluate[*mapDot](readDot+`("BROWSER-1")`))
			if err != nil {
				t.Fatal(err)
			}
			if d != nil && math.Abs(d.Lat-lat) < 1e-6 && math.Abs(d.Lon-lon) < 1e-6 {
				wantX := (lon - d.West) / (d.East - d.West) * d.Width
				wantY := (d.North - lat) / (d.North - d.South) * d.Height
				if math.Abs(d.CX-wantX) > 0.5 || math.Abs(d.CY-wantY) > 0.5 {
					t.Errorf("the dot of %v, %v is at (%v, %v), the map puts it at (%v, %v): %+v", lat, lon, d.CX, d.CY, wantX, wantY, d)
				}
				if d.West > lon || d.East < lon || d.South > lat || d.North < lat {
					t.Errorf("the map (%v..%v, %v..%v) does not show %v, %v", d.South, d.North, d.West, d.East, lat, lon)
				}
				return *d
			}
			if time.Now().After(deadline) {
				t.Fatalf("the dot never came to %v, %v: %+v", lat, lon, d)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	d := dotAt(43.6045, 1.4440)
	if d.Fill != "#dc2626" || d.Label != "BROWSER-1" {
		t.Errorf("an opposing entity drawn %s, labelled %q", d.Fill, d.Label)
	}
	// It moves, and the page follows without a reload.
	at <- [2]float64{43.61, 1.45}
	dotAt(43.61, 1.45)

	// The gateway's counters.
	deadline := time.Now().Add(20 * time.Second)
	for {
		row, err := chromedp.Run(cctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#gateways tbody tr[data-gateway] td')).map(td => td.textContent)`))
		if err != nil {
			t.Fatal(err)
		}
		if len(row) == 9 && row[0] == gwFed.Name() && row[1] == "1" && strings.HasPrefix(row[3], "ES ") && row[3] != "ES 0 · fire 0 · det. 0 · attr. 0" && row[5] == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateways' table shows %q", row)
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkPageLocal(t, cctx)
	if out := os.Getenv("MESHRTI_MAP_SCREENSHOT"); out != "" {
		screenshot(t, cctx, out)
	}
}
