// Package monitor is the federation monitor of federate-node: an
// ordinary federate that reads the Management Object Model (docs/mom.md)
// through the public services and serves what it learns as a web page,
// JSON and Prometheus metrics (docs/monitor.md).
//
// meshrti has no central RTI to look into; every federate's node answers
// for its own federate's HLAfederate instance, and the monitor's own node
// answers for the federation (synchronization points, the HLAfederation
// instance, lost federates). So the monitor sees a C++, Java or Python
// federate hosted by `serve` exactly as a Go one.
//
// Reader decodes the MOM's instances and reports; Monitor drives it:
//
//	fed, _ := peer.Join(ctx, cfg)
//	m, _ := monitor.Start(monitor.Config{Federate: fed, Federation: cfg.Federation})
//	defer m.Close()
//	http.ListenAndServe("127.0.0.1:8080", m.Handler(nil))
//
// HostPages is `serve -http`: a page for each federation a fedpro.Host's
// federates are in, each read by a monitor federate joined when the page
// is first asked for.
//
// # Concurrency properties
//
// A Monitor runs two goroutines, one reading the federate's events and
// one asking for the MOM's values every period; Close waits for both.
// Snapshot, History, Choose and the Handler may be called from any
// goroutine. HostPages runs one goroutine that ends idle monitors, and
// serves from any goroutine; Close waits for it and ends the monitors.
package monitor
