package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/dis"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
)

// disCommands is the table of "federate-node dis": the gateway (the
// default row) and "dis send".
func disCommands() []cli.Command {
	return []cli.Command{
		{Name: "", Help: []cli.HelpLine{{Synopsis: "dis -federation NAME [join flags] -fom MODULE... -dis ADDR:PORT [-dis-send ADDR:PORT] -exercise N -site S -app A [-version 6|7]", Text: "bridge a DIS exercise and the federation with the RPR FOM 2.0: DIS\n" +
			"entities become HLA instances, HLA instances go out as PDUs\n" +
			"(docs/dis.md; federate-node dis -h lists the flags)"}}, Run: runDIS},
		{Name: "send", Help: []cli.HelpLine{{Synopsis: "dis send -dis ADDR:PORT [-exercise N -marking M -lat LAT -lon LON ...]", Text: "send the Entity State PDUs of one entity circling a point, as a DIS\n" +
			"simulator would, until interrupted"}}, Run: runDISSend},
	}
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// disFlags are the gateway's own flags.
type disFlags struct {
	addr, send, iface, httpAddr string
	exercise, site, app         uint
	version                     uint
	ttl                         int
	entityTimeout, heartbeat    time.Duration
	position, orientation       float64
	classes, records            multiFlag
	named                       uint
	joinTimeout                 time.Duration
	verbose                     bool
}

func (d *disFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.addr, "dis", "", "the exercise's UDP `ADDR:PORT`, listened on: a multicast group, a broadcast address (127.255.255.255, a subnet's .255) or a unicast address of this host; DIS's usual port is 3000 (required)")
	fs.StringVar(&d.send, "dis-send", "", "where PDUs go, `ADDR:PORT` (default: -dis)")
	fs.StringVar(&d.iface, "dis-iface", "lo", "multicast interface of the DIS socket")
	fs.IntVar(&d.ttl, "dis-ttl", 0, "multicast TTL of the PDUs sent: 0 stays on this host, 1 reaches the local link")
	fs.UintVar(&d.exercise, "exercise", 1, "the DIS exercise bridged, 1 to 255; PDUs of others are dropped")
	fs.UintVar(&d.site, "site", 0, "the gateway's DIS site, 1 to 65534 (required)")
	fs.UintVar(&d.app, "app", 0, "the gateway's DIS application, 1 to 65534 (required)")
	fs.UintVar(&d.version, "version", 7, "protocol version of the PDUs sent: 6 (1278.1-1995/1998) or 7 (1278.1-2012); both are read")
	fs.DurationVar(&d.entityTimeout, "entity-timeout", dis.DefaultTimeout, "delete a DIS entity not heard for this long")
	fs.DurationVar(&d.heartbeat, "heartbeat", dis.DefaultHeartbeat, "send every HLA entity at least this often")
	fs.Float64Var(&d.position, "position-threshold", dis.DefaultPositionThreshold, "dead-reckoning threshold of position, metres")
	fs.Float64Var(&d.orientation, "orientation-threshold", 3, "dead-reckoning threshold of orientation, degrees")
	fs.Var(&d.classes, "class", "`KIND.DOMAIN.CATEGORY=CLASS`: DIS entities of this type become instances of CLASS, before the default table (repeatable; * for any)")
	fs.Var(&d.records, "record", "`TYPE=ATTRIBUTE`: attribute records of this type carry the attribute, encoded by its FOM type (repeatable)")
	fs.UintVar(&d.named, "named-record", dis.DefaultNamedRecordType, "attribute record type of records that carry an attribute by name")
	fs.StringVar(&d.httpAddr, "http", "", "also serve the monitor's page of the federation, with the gateway's metrics, on `ADDR` (e.g. 127.0.0.1:8080)")
	fs.DurationVar(&d.joinTimeout, "join-timeout", 30*time.Second, "give up joining after this long")
	fs.BoolVar(&d.verbose, "v", false, "log every PDU and value dropped")
}

// config is the gateway's configuration for fed.
func (d *disFlags) config(fed *peer.Federate, reg prometheus.Registerer, log zerolog.Logger) (dis.Config, error) {
	var errs []error
	if d.addr == "" {
		errs = append(errs, errors.New("-dis ADDR:PORT is required"))
	}
	if d.exercise < 1 || d.exercise > 255 {
		errs = append(errs, fmt.Errorf("-exercise %d: want 1 to 255", d.exercise))
	}
	if d.site < 1 || d.site > 65534 || d.app < 1 || d.app > 65534 {
		errs = append(errs, errors.New("-site and -app are required, each 1 to 65534"))
	}
	if d.version != 6 && d.version != 7 {
		errs = append(errs, fmt.Errorf("-version %d: want 6 or 7", d.version))
	}
	if d.named > math.MaxUint32 {
		errs = append(errs, errors.New("-named-record: want a 32-bit record type"))
	}
	cfg := dis.Config{
		Federate: fed, DIS: d.addr, Send: d.send, Interface: d.iface, TTL: d.ttl,
		Exercise: uint8(d.exercise), Site: uint16(d.site), Application: uint16(d.app), Version: uint8(d.version),
		Timeout: d.entityTimeout, Heartbeat: d.heartbeat, PositionThreshold: d.position, OrientationThreshold: d.orientation * math.Pi / 180,
		Mapping:    dis.MapperConfig{NamedRecordType: uint32(d.named), Records: map[uint32]string{}},
		Registerer: reg, Logger: log,
	}
	for _, c := range d.classes {
		r, err := dis.ParseClassRule(c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cfg.Mapping.Classes = append(cfg.Mapping.Classes, r)
	}
	for _, s := range d.records {
		typ, attr, ok := strings.Cut(s, "=")
		n, err := strconv.ParseUint(typ, 10, 32)
		if !ok || err != nil || attr == "" {
			errs = append(errs, fmt.Errorf("-record %q: want TYPE=ATTRIBUTE", s))
			continue
		}
		cfg.Mapping.Records[uint32(n)] = attr
	}
	return cfg, errors.Join(errs...)
}

// runDIS is "federate-node dis": a federate with the RPR FOM bridging a
// DIS exercise (docs/dis.md).
func runDIS(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("dis", stdout, stderr)
	fs := cmd.FS
	var nf nodeFlags
	registerJoinFlags(fs, &nf, "RPR FOM 2.0 module file, or a directory of them (repeatable; required)")
	var df disFlags
	df.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		return cmd.UsageError(fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	if len(nf.foms) == 0 {
		return cmd.UsageError("-fom: the RPR FOM 2.0 modules are required (a directory of them will do)")
	}
	foms, err := cli.ExpandFOMs(nf.foms)
	if err != nil {
		return cmd.UsageError(err.Error())
	}
	nf.foms = foms
	if _, err := df.config(nil, nil, zerolog.Nop()); err != nil {
		return cmd.UsageError(err.Error())
	}
	nf.role = "dis"
	pcfg, err := nf.config()
	if err != nil {
		return cmd.UsageError(err.Error())
	}
	pcfg.FOMModules = append(pcfg.FOMModules, dis.StatusModule())
	level := zerolog.WarnLevel
	if df.verbose {
		level = zerolog.DebugLevel
	}
	log := zerolog.New(zerolog.ConsoleWriter{Out: stderr, NoColor: true}).Level(level).With().Timestamp().Logger()
	stopProfile, err := cli.StartProfile(nf.cpuprofile)
	if err != nil {
		return cmd.Fail(err)
	}
	defer stopProfile()
	ctx, stop := cli.SignalContext()
	defer stop()
	jctx, jcancel := context.WithTimeout(ctx, df.joinTimeout)
	fed, err := peer.Join(jctx, pcfg)
	jcancel()
	if err != nil {
		return cmd.Fail(fmt.Errorf("join: %w", err))
	}
	defer fed.Close()
	printJoined(stdout, fed, nf.federation)
	reg := prometheus.NewRegistry()
	gcfg, _ := df.config(fed, reg, log)
	g, err := dis.New(gcfg)
	if err != nil {
		return cmd.Fail(err)
	}
	sendTo := gcfg.DIS
	if gcfg.Send != "" {
		sendTo = gcfg.Send
	}
	fmt.Fprintf(stdout, "dis exercise %d on %s (%s), sending version %d to %s as site %d application %d\n",
		gcfg.Exercise, g.ListenAddr(), dis.KindOf(netip.MustParseAddrPort(gcfg.DIS).Addr()), gcfg.Version, sendTo, gcfg.Site, gcfg.Application)
	var mon *monitorServer
	var monFed *peer.Federate
	if df.httpAddr != "" {
		monFed, mon, err = startDISMonitor(ctx, nf, df, fed, reg, stderr)
		if err != nil {
			g.Close()
			return cmd.Fail(err)
		}
		fmt.Fprintf(stdout, "monitor on http://%s/\n", mon.addr)
	}
	<-ctx.Done()
	if mon != nil {
		mon.close()
		resign(monFed, peer.NoAction, stderr)
		monFed.Close()
	}
	g.Close()
	st, _ := json.Marshal(g.Stats())
	fmt.Fprintf(stdout, "stats %s\n", st)
	resign(fed, peer.DeleteObjects, stderr)
	return 0
}

func resign(fed *peer.Federate, action peer.ResignAction, stderr io.Writer) {
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if err := fed.ResignFederationExecution(rctx, action); err != nil && !errors.Is(err, peer.ErrClosed) {
		fmt.Fprintln(stderr, "federate-node dis: resign:", err)
	}
}

// startDISMonitor joins a monitor federate through the gateway's gossip
// address and serves its page, with the gateway's metrics, on -http.
func startDISMonitor(ctx context.Context, nf nodeFlags, df disFlags, gw *peer.Federate, reg *prometheus.Registry, stderr io.Writer) (*peer.Federate, *monitorServer, error) {
	seed, ok := gw.GossipAddr()
	if !ok {
		return nil, nil, errors.New("-http: the gateway has no gossip address to join the monitor through")
	}
	mf := nf.joinFlags
	mf.name, mf.seeds, mf.foms = "", seed, nil
	host, _, _ := cli.SplitHostPort(nf.gossip)
	mf.gossip = net.JoinHostPort(host, "0")
	cfg, err := mf.config("federate-node/monitor")
	if err != nil {
		return nil, nil, err
	}
	cfg.AdoptTime = true
	jctx, cancel := context.WithTimeout(ctx, df.joinTimeout)
	defer cancel()
	fed, err := peer.Join(jctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("-http: joining the monitor: %w", err)
	}
	srv, err := startMonitorServer(fed, nf.federation, df.httpAddr, time.Second, func(format string, args ...any) {
		fmt.Fprintf(stderr, format+"\n", args...)
	}, reg)
	if err != nil {
		fed.Close()
		return nil, nil, err
	}
	return fed, srv, nil
}

// runDISSend is "federate-node dis send": one entity circling a point,
// sent as Entity State PDUs at a steady rate, deactivated at the end.
func runDISSend(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("dis send", stdout, stderr)
	fs := cmd.FS
	to := fs.String("dis", "", "where the PDUs go, `ADDR:PORT` (required)")
	iface := fs.String("dis-iface", "lo", "multicast interface")
	exercise := fs.Uint("exercise", 1, "DIS exercise, 1 to 255")
	site := fs.Uint("site", 1, "DIS site of the entity")
	app := fs.Uint("app", 1, "DIS application of the entity")
	entity := fs.Uint("entity", 1, "DIS entity number")
	marking := fs.String("marking", "DIS-DEMO", "entity marking, up to 11 characters")
	force := fs.Uint("force", 1, "force: 1 friendly, 2 opposing, 3 neutral")
	kind := fs.String("type", "1.2.225.1.1.0.0", "entity type: `KIND.DOMAIN.COUNTRY.CATEGORY.SUBCATEGORY.SPECIFIC.EXTRA` (default an aircraft)")
	lat := fs.Float64("lat", 48.8584, "latitude of the circle's centre, degrees")
	lon := fs.Float64("lon", 2.2945, "longitude of the circle's centre, degrees")
	alt := fs.Float64("alt", 1000, "height above the WGS84 ellipsoid, metres")
	radius := fs.Float64("radius", 2000, "radius of the circle, metres (0: stand still)")
	speed := fs.Float64("speed", 100, "speed along the circle, metres per second")
	rate := fs.Float64("rate", 5, "PDUs per second")
	version := fs.Uint("version", 7, "protocol version, 6 or 7")
	duration := fs.Duration("duration", 0, "stop after this long (default: until interrupted)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	dst, err := netip.ParseAddrPort(*to)
	if err != nil || !dst.Addr().Is4() {
		return cmd.UsageError("-dis IPv4ADDR:PORT is required")
	}
	et, err := parseEntityType(*kind)
	if err != nil {
		return cmd.UsageError(err.Error())
	}
	if *exercise < 1 || *exercise > 255 || *site > 65535 || *app > 65535 || *entity > 65535 || *force > 255 || (*version != 6 && *version != 7) || *rate <= 0 {
		return cmd.UsageError("-exercise 1-255, -site, -app and -entity up to 65535, -version 6 or 7, -rate above 0")
	}
	conn, err := dis.Dial(dst, *iface)
	if err != nil {
		return cmd.Fail(err)
	}
	defer conn.Close()
	ctx, stop := cli.SignalContext()
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	c := dis.Circle{Lat: *lat, Lon: *lon, Alt: *alt, Radius: *radius, Speed: *speed}
	es := &dis.EntityState{
		Header: dis.Header{Version: uint8(*version), Exercise: uint8(*exercise)},
		ID:     dis.EntityID{Site: uint16(*site), Application: uint16(*app), Entity: uint16(*entity)},
		Force:  uint8(*force), Type: et, Marking: dis.NewMarking(*marking),
		DeadReckoning: dis.DeadReckoning{Algorithm: dis.DRFPW},
		Appearance:    1 << 22, // power plant on
	}
	fmt.Fprintf(stdout, "sending entity %d.%d.%d %q on exercise %d to %s, %.0f PDUs/s\n", *site, *app, *entity, *marking, *exercise, dst, *rate)
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	defer tick.Stop()
	var sent int
	var buf []byte
	for {
		now := time.Now()
		c.State(now.Sub(start), es)
		es.Timestamp = dis.Timestamp(now, false)
		if buf, err = conn.Send(es, buf); err != nil {
			return cmd.Fail(err)
		}
		sent++
		select {
		case <-ctx.Done():
			es.Appearance |= dis.AppearanceDeactivated
			es.Timestamp = dis.Timestamp(time.Now(), false)
			_, _ = conn.Send(es, buf)
			fmt.Fprintf(stdout, "sent %d PDUs\n", sent+1)
			return 0
		case <-tick.C:
		}
	}
}

// parseEntityType reads K.D.C.C.S.S.E.
func parseEntityType(s string) (dis.EntityType, error) {
	f := strings.Split(s, ".")
	if len(f) != 7 {
		return dis.EntityType{}, fmt.Errorf("-type %q: want seven fields, KIND.DOMAIN.COUNTRY.CATEGORY.SUBCATEGORY.SPECIFIC.EXTRA", s)
	}
	var n [7]uint64
	for i, x := range f {
		bits := 8
		if i == 2 {
			bits = 16
		}
		v, err := strconv.ParseUint(x, 10, bits)
		if err != nil {
			return dis.EntityType{}, fmt.Errorf("-type %q: field %d: %v", s, i+1, err)
		}
		n[i] = v
	}
	return dis.EntityType{Kind: uint8(n[0]), Domain: uint8(n[1]), Country: uint16(n[2]), Category: uint8(n[3]),
		Subcategory: uint8(n[4]), Specific: uint8(n[5]), Extra: uint8(n[6])}, nil
}
