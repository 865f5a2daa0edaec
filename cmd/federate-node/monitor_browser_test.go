package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/meshrti/meshrti/internal/monitor"
)

// findBrowser returns the path of a Chromium or Chrome, or "".
func findBrowser() string {
	if p := os.Getenv("MESHRTI_BROWSER"); p != "" {
		return p
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// needBrowser returns the path of a Chromium or Chrome, and skips the
// test, saying what to install, where there is none.
func needBrowser(t *testing.T) string {
	t.Helper()
	browser := findBrowser()
	if browser == "" {
		t.Skip("no Chromium or Chrome found (chromium, chromium-browser, google-chrome; or set MESHRTI_BROWSER): apt-get install chromium")
	}
	return browser
}

// openBrowser starts browser, headless, with a window of width by height
// pixels, and returns the context of its actions, which ends after 90 s,
// and what closes it.
func openBrowser(browser string, width, height int) (context.Context, func()) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.WindowSize(width, height),
		chromedp.Flag("disable-dev-shm-usage", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	return ctx, func() { cancel(); bcancel(); acancel() }
}

// pageRow is one federate's row as the page shows it.
type pageRow struct {
	Name        string `json:"name"`
	Time        string `json:"time"`
	Updates     string `json:"updates"`
	Reflections string `json:"reflections"`
	State       string `json:"state"`
}

const readRows = `Array.from(document.querySelectorAll('#federates tbody tr[data-federate]')).map(tr => ({
	name: tr.dataset.federate,
	time: tr.querySelector('.time').textContent,
	updates: tr.querySelector('.updates').textContent,
	reflections: tr.querySelector('.reflections').textContent,
	state: tr.querySelector('.state').textContent}))`

// The page in a real browser (headless Chromium driven by chromedp):
// it loads with no internet, shows every federate, and its times and
// counts change without a reload; the charts draw a line per federate;
// the synchronization point, the objects per class, the chosen
// instance's owner and the lost federate appear. With
// MESHRTI_MONITOR_SCREENSHOT=FILE it saves a screenshot (docs/monitor.png).
func TestMonitorBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a federation and a browser")
	}
	browser := needBrowser(t)
	f := newMonFed(t, 59)
	radar := f.join("Radar")
	f.watch(radar)
	for i := 1; i <= 3; i++ {
		f.fly(f.join(fmt.Sprintf("Aircraft-%d", i)), time.Duration(60+40*i)*time.Millisecond)
	}
	if err := radar.RegisterFederationSynchronizationPoint("ready", nil); err != nil {
		t.Fatal(err)
	}
	lost := startChildNode(t, "-role", "pong", "-name", "Tower", "-federation", f.name, "-seeds", f.seeds[0],
		"-mcast-port", fmt.Sprint(f.port), "-iface", "lo", "-timeout", "120s")
	base, _ := f.monitorOn()
	waitFederation(t, base, "Tower known", 15*time.Second, func(s monitor.Federation) bool {
		_, ok := federate(s, "Tower")
		return ok
	})
	if err := lost.Process.Kill(); err != nil {
		t.Fatal(err)
	}

	ctx, closeBrowser := openBrowser(browser, 1400, 1250)
	defer closeBrowser()
	if err := chromedp.Do(ctx, chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#federates tbody tr[data-federate="Aircraft-3"]`))); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	before, err := chromedp.Run(ctx, chromedp.Evaluate[[]pageRow](readRows))
	if err != nil {
		t.Fatal(err)
	}
	rowOf := func(rows []pageRow, name string) (pageRow, bool) {
		for _, r := range rows {
			if r.Name == name {
				return r, true
			}
		}
		return pageRow{}, false
	}
	for _, n := range []string{"Radar", "Aircraft-1", "Aircraft-2", "Aircraft-3", "monitor"} {
		if _, ok := rowOf(before, n); !ok {
			t.Errorf("the page lacks %s: %+v", n, before)
		}
	}
	// The same page, a few seconds later, without a reload.
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return -1
		}
		return v
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		now, err := chromedp.Run(ctx, chromedp.Evaluate[[]pageRow](readRows))
		if err != nil {
			t.Fatal(err)
		}
		a0, _ := rowOf(before, "Aircraft-1")
		a1, _ := rowOf(now, "Aircraft-1")
		r0, _ := rowOf(before, "Radar")
		r1, _ := rowOf(now, "Radar")
		tw, _ := rowOf(now, "Tower")
		if num(a1.Time) > num(a0.Time) && num(a1.Updates) > num(a0.Updates) && num(r1.Reflections) > num(r0.Reflections) && tw.State == "lost" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not move on: before %+v, now %+v", before, now)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Ownership: pick the class and the instance as a user would.
	// Each pick sets the value and fires "change" in one script, as a
	// user's pick does: a snapshot rendered in between would reset it.
	pick := func(id, v string) chromedp.Action[chromedp.Void] {
		return ignore(chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const s = document.getElementById(%q); s.value = %q; return s.dispatchEvent(new Event("change")) })()`, id, v)))
	}
	if err := chromedp.Do(ctx,
		chromedp.WaitReady(chromedp.CSS(`#pick-class option[value="HLAobjectRoot.Aircraft"]`)),
		pick("pick-class", "HLAobjectRoot.Aircraft"),
		chromedp.WaitReady(chromedp.CSS(`#pick-instance option[value="Aircraft-2"]`)),
		pick("pick-instance", "Aircraft-2"),
	); err != nil {
		t.Fatalf("choosing an instance: %v", err)
	}
	checks := map[string]string{
		"the owner of Aircraft-2's Position": `(() => { const r = document.querySelector('#ownership tr[data-attribute="Position"]'); return r ? r.children[1].textContent : "" })()`,
		"the Aircraft count":                 `(() => { const r = document.querySelector('#objects tr[data-class="HLAobjectRoot.Aircraft"]'); return r ? r.children[1].textContent : "" })()`,
		"the sync point":                     `(() => { const r = document.querySelector('#syncpoints tr[data-label="ready"]'); return r ? r.children[1].textContent : "" })()`,
		"the lost federate":                  `(() => { const r = document.querySelector('#lost tr[data-lost="Tower"]'); return r ? r.children[0].textContent : "" })()`,
		"the time chart's lines":             `String(document.querySelectorAll('#chart-time polyline').length >= 5)`,
		"the rate chart's lines":             `String(document.querySelectorAll('#chart-rate polyline').length >= 5)`,
	}
	want := map[string]string{
		"the owner of Aircraft-2's Position": "Aircraft-2", "the Aircraft count": "3", "the sync point": "in progress",
		"the lost federate": "Tower", "the time chart's lines": "true", "the rate chart's lines": "true", // one per federate, the lost one's past included
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		bad := map[string]string{}
		for what, js := range checks {
			got, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
			if err != nil {
				t.Fatal(err)
			}
			if got != want[what] {
				bad[what] = got
			}
		}
		if len(bad) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page shows, for what should be %v: %v", want, bad)
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkPageLocal(t, ctx)
	if out := os.Getenv("MESHRTI_MONITOR_SCREENSHOT"); out != "" {
		time.Sleep(40 * time.Second) // some history for the charts
		screenshot(t, ctx, out)
		t.Logf("screenshot in %s", out)
	}
}

// checkPageLocal checks that the page took nothing from outside: every
// request was to the server that served it.
func checkPageLocal(t *testing.T, ctx context.Context) {
	t.Helper()
	external, err := chromedp.Run(ctx, chromedp.Evaluate[int](`performance.getEntriesByType('resource').filter(e => !e.name.startsWith(location.origin)).length`))
	if err != nil {
		t.Fatal(err)
	}
	if external != 0 {
		t.Errorf("the page loaded %d resources from elsewhere", external)
	}
}

// screenshot writes a screenshot of the whole page to the file out.
func screenshot(t *testing.T, ctx context.Context, out string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ignore drops an action's value.
func ignore[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}
