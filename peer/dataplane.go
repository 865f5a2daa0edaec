package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// TransportMode says how the datagrams of a group reach its members
// (Config.TransportMode, docs/deploy.md).
type TransportMode string

const (
	// TransportMulticast sends each datagram once to the group's IP
	// multicast address and lets the network copy it: one LAN. The
	// default.
	TransportMulticast TransportMode = "multicast"
	// TransportUnicast sends each datagram to every member of the group
	// by UDP unicast, members learned from the control plane: routed
	// subnets, cloud networks, Kubernetes.
	TransportUnicast TransportMode = "unicast"
	// TransportAuto uses the federation's mode when it has one; when the
	// federation was created with auto and its first members have not
	// settled it yet, it probes multicast among them and falls back to
	// unicast (Config.ProbeMembers, Config.ProbeWait).
	TransportAuto TransportMode = "auto"
)

// ParseTransportMode parses "multicast", "unicast" or "auto" ("" is
// multicast).
func ParseTransportMode(s string) (TransportMode, error) {
	switch m := TransportMode(s); m {
	case "":
		return TransportMulticast, nil
	case TransportMulticast, TransportUnicast, TransportAuto:
		return m, nil
	}
	return "", fmt.Errorf("peer: unknown transport %q (want multicast, unicast or auto)", s)
}

// ErrTransportMismatch is wrapped (with ErrRTIinternalError) by the
// error of a join whose Config.TransportMode is not the federation's:
// all members of a federation use one mode.
var ErrTransportMismatch = errors.New("peer: the federation uses another data-plane transport")

// Keys of the data plane in the control plane's per-federate replicated
// state and register.
const (
	// keyDataPlane holds a unicast federate's encoded
	// transport.Announcement: its address and joined groups.
	keyDataPlane = "d/u"
	// keyModeDecided holds, in a federation created with auto, the mode
	// its first members settled on (the register decides the race), and
	// in each member's replicated state the mode it uses (the register
	// key is freed when its holder leaves; the members still say).
	keyModeDecided = "d/mode"
)

// Auto's probe defaults.
const (
	defaultProbeWait   = 5 * time.Second
	probeWindow        = 500 * time.Millisecond
	probeBeaconEvery   = 50 * time.Millisecond
	probeGroup         = transport.Group(0x7f000001)
	probeBeaconLen     = 12
	probeBeaconMagic   = 0x6d727470 // "mrtp"
	defaultProbeMember = 2
)

func (c *Config) transportMode() TransportMode {
	m, _ := ParseTransportMode(string(c.TransportMode))
	return m
}

func (c *Config) probeWait() time.Duration {
	if c.ProbeWait > 0 {
		return c.ProbeWait
	}
	return defaultProbeWait
}

// validateTransport checks the data-plane settings of c.
func (c *Config) validateTransport() error {
	m, err := ParseTransportMode(string(c.TransportMode))
	if err != nil {
		return err
	}
	if c.ProbeWait < 0 || c.ProbeMembers < 0 {
		return errors.New("peer: negative Config.ProbeWait or ProbeMembers")
	}
	if c.Transport != nil {
		_, dir := c.Transport.(transport.Directory)
		switch {
		case m == TransportAuto:
			return errors.New("peer: Config.TransportMode auto needs the default transports (Config.Transport unset)")
		case m == TransportUnicast && !dir:
			return errors.New("peer: Config.TransportMode unicast with a Config.Transport that is not a transport.Directory")
		case m == TransportMulticast && dir:
			return errors.New("peer: a Config.Transport that is a transport.Directory needs Config.TransportMode unicast")
		}
	}
	if c.Advertise != "" {
		if _, _, err := net.SplitHostPort(c.Advertise); err != nil {
			return fmt.Errorf("peer: Config.Advertise %q: %w", c.Advertise, err)
		}
	}
	return nil
}

// settleTransport decides the data-plane mode this federate uses, given
// the mode in the federation's record (recorded; "" for a record that
// predates modes: multicast), and returns the multicast transport auto's
// probe opened, if the decision is multicast (nil otherwise).
func (f *Federate) settleTransport(ctx context.Context, recorded string) (TransportMode, *transport.UDP, error) {
	want := f.cfg.transportMode()
	fed := TransportMode(recorded)
	if fed == "" {
		fed = TransportMulticast
	}
	mismatch := func(fed TransportMode) error {
		return fmt.Errorf("%w: %w: federation %q uses %s, this federate asks for %s (all members use one mode; -transport auto adopts the federation's)",
			ErrRTIinternalError, ErrTransportMismatch, f.cfg.Federation, fed, want)
	}
	if fed != TransportAuto {
		if want != TransportAuto && want != fed {
			return "", nil, mismatch(fed)
		}
		if want == TransportAuto {
			f.log.Info().Str("federation", f.cfg.Federation).Str("transport", string(fed)).
				Msg("transport auto: using the federation's data-plane mode, recorded at its creation")
		}
		return fed, nil, nil
	}
	// A federation created with auto: the first members settle its mode.
	if m, ok := f.modeOfMembers(); ok {
		if want != TransportAuto && want != m {
			return "", nil, mismatch(m)
		}
		f.log.Info().Str("transport", string(m)).Msg("transport auto: using the mode the federation's members settled on")
		return m, nil, nil
	}
	var probe *transport.UDP
	choice := want
	if want == TransportAuto {
		var err error
		if choice, probe, err = f.probeMulticast(ctx); err != nil {
			return "", nil, err
		}
	}
	e, _, err := f.ctl.Acquire(ctx, keyModeDecided, []byte(choice))
	if err != nil {
		if probe != nil {
			probe.Close()
		}
		return "", nil, fmt.Errorf("%w: settling the data-plane mode: %w", ErrRTIinternalError, err)
	}
	decided := TransportMode(e.Value)
	if _, err := ParseTransportMode(string(decided)); err != nil || decided == TransportAuto || decided == "" {
		decided = choice
	}
	if decided != choice {
		f.log.Info().Str("transport", string(decided)).Str("probed", string(choice)).
			Msg("transport auto: another member settled the federation's mode first")
	}
	if want != TransportAuto && want != decided {
		if probe != nil {
			probe.Close()
		}
		return "", nil, mismatch(decided)
	}
	if decided != TransportMulticast && probe != nil {
		probe.Close()
		probe = nil
	}
	return decided, probe, nil
}

// TransportMode returns the data-plane mode the federate uses, as its
// join settled it (never auto).
func (f *Federate) TransportMode() TransportMode { return f.mode }

// modeOfMembers returns the mode another member says it uses.
func (f *Federate) modeOfMembers() (TransportMode, bool) {
	for _, e := range f.ctl.States() {
		if e.Key == keyModeDecided && e.Federate != f.handle {
			if m, err := ParseTransportMode(string(e.Value)); err == nil && m != TransportAuto && len(e.Value) > 0 {
				return m, true
			}
		}
	}
	return "", false
}

// probeMulticast is auto's probe, in a federation whose mode is not
// settled: it opens the multicast transport, and on a probe group sends
// a beacon naming this federate every 50ms while it listens for the
// others'. It waits (up to Config.ProbeWait) until Config.ProbeMembers
// federates are joined (default 2: one other), and at least 500ms of
// beacons were exchanged after that; then it chooses multicast if it
// heard every other member present, unicast otherwise (also when no
// other member came: unicast works everywhere). It returns at once
// with the settled mode when another member settles it meanwhile.
func (f *Federate) probeMulticast(ctx context.Context) (TransportMode, *transport.UDP, error) {
	u, err := f.newMulticast()
	if err != nil {
		f.log.Warn().Err(err).Msg("transport auto: no multicast here; using unicast")
		return TransportUnicast, nil, nil
	}
	if err := u.Join(probeGroup); err != nil {
		u.Close()
		f.log.Warn().Err(err).Msg("transport auto: cannot join the probe group; using unicast")
		return TransportUnicast, nil, nil
	}
	want := f.cfg.ProbeMembers
	if want == 0 {
		want = defaultProbeMember
	}
	var beacon [probeBeaconLen]byte
	binary.BigEndian.PutUint32(beacon[:], probeBeaconMagic)
	binary.BigEndian.PutUint64(beacon[4:], uint64(f.handle))
	heard := map[FederateHandle]bool{}
	tick := time.NewTicker(probeBeaconEvery)
	defer tick.Stop()
	deadline := time.After(f.cfg.probeWait())
	var enough time.Time // when ProbeMembers were first present
	timedOut := false
	for {
		_ = u.Send(probeGroup, beacon[:])
		select {
		case <-ctx.Done():
			u.Close()
			return "", nil, ctx.Err()
		case p, ok := <-u.Recv():
			if ok && p.Group == probeGroup && len(p.Data) == probeBeaconLen && binary.BigEndian.Uint32(p.Data) == probeBeaconMagic {
				heard[FederateHandle(binary.BigEndian.Uint64(p.Data[4:]))] = true
			}
			continue
		case <-tick.C:
		case <-deadline:
			timedOut = true
		}
		if m, ok := f.modeOfMembers(); ok {
			leaveProbe(u)
			return m, u, nil
		}
		var others []FederateHandle
		for _, m := range f.ctl.Members() {
			if m.Handle != f.handle {
				others = append(others, m.Handle)
			}
		}
		if enough.IsZero() && len(others)+1 >= want {
			enough = time.Now()
		}
		allHeard := len(others) > 0 && !slices.ContainsFunc(others, func(h FederateHandle) bool { return !heard[h] })
		if !timedOut && (enough.IsZero() || time.Since(enough) < probeWindow) {
			continue
		}
		leaveProbe(u)
		lg := f.log.Info().Int("members", len(others)+1).Int("heard", len(heard))
		if allHeard {
			lg.Msg("transport auto: multicast reaches every member; using multicast")
			return TransportMulticast, u, nil
		}
		u.Close()
		if len(others) == 0 {
			lg.Msg("transport auto: no other member to probe multicast with; falling back to unicast, which works on any network")
		} else {
			f.log.Warn().Int("members", len(others)+1).Int("heard", len(heard)).
				Msg("transport auto: multicast does not reach every member; falling back to unicast")
		}
		return TransportUnicast, nil, nil
	}
}

// leaveProbe leaves the probe group and drops the beacons still queued,
// so that the data plane does not see them.
func leaveProbe(u *transport.UDP) {
	_ = u.Leave(probeGroup)
	for {
		select {
		case <-u.Recv():
		default:
			return
		}
	}
}

// socketDefaults fills the data-plane socket settings left zero: packets
// a full frame fits in, and room for a full flow-control window in the
// kernel, so that a burst is held rather than dropped and repaired
// (Linux caps the buffers at net.core.rmem_max and wmem_max).
func (c *Config) socketDefaults(maxPacket, readBuffer, writeBuffer *int) {
	if *maxPacket == 0 {
		*maxPacket = max(transport.DefaultMaxPacket, c.maxFrame()+64)
	}
	if *readBuffer == 0 {
		*readBuffer = 4 << 20
	}
	if *writeBuffer == 0 {
		*writeBuffer = 4 << 20
	}
}

// newMulticast opens the default multicast transport of f.cfg.
func (f *Federate) newMulticast() (*transport.UDP, error) {
	cfg := f.cfg
	mc := cfg.Multicast
	if mc.Federation == "" {
		mc.Federation = cfg.Federation
	}
	cfg.socketDefaults(&mc.MaxPacket, &mc.ReadBuffer, &mc.WriteBuffer)
	return transport.NewUDP(mc)
}

// newUnicast opens the default unicast transport of f.cfg: bound to
// Config.Unicast.Bind, else to the gossip bind address (or, when
// Config.Advertise names a port and gossip binds nothing, the wildcard)
// with Advertise's port or a free one, else to loopback; announced at
// Config.Advertise when set.
func (f *Federate) newUnicast() (*transport.Unicast, error) {
	cfg := f.cfg
	uc := cfg.Unicast
	if uc.Federation == "" {
		uc.Federation = cfg.Federation
	}
	if uc.Bind == "" && cfg.Gossip.BindAddr != "" {
		uc.Bind = net.JoinHostPort(cfg.Gossip.BindAddr, "0")
	}
	if uc.Advertise == "" {
		uc.Advertise = cfg.Advertise
	}
	if _, port, err := net.SplitHostPort(uc.Advertise); uc.Bind == "" && err == nil && port != "" && port != "0" {
		uc.Bind = net.JoinHostPort("0.0.0.0", port) // the advertised port, forwarded here
		if cfg.Gossip.BindAddr != "" {
			uc.Bind = net.JoinHostPort(cfg.Gossip.BindAddr, port)
		}
	}
	cfg.socketDefaults(&uc.MaxPacket, &uc.ReadBuffer, &uc.WriteBuffer)
	return transport.NewUnicast(uc)
}

// wireDirectory connects a unicast transport to the control plane:
// the others' announcements as they are now, then this federate's own,
// spread through its replicated state. Later changes come as control
// events (directoryEvent).
func (f *Federate) wireDirectory() {
	d, ok := f.tr.(transport.Directory)
	if !ok {
		return
	}
	f.dir = d
	for _, e := range f.ctl.States() {
		if e.Key == keyDataPlane && e.Federate != f.handle {
			f.directoryUpdate(e.Federate, e.Value, e.Version)
		}
	}
	d.SetAnnounce(func(b []byte) {
		if err := f.ctl.SetState(keyDataPlane, b); err != nil {
			f.log.Warn().Err(err).Msg("announcing this federate's data-plane groups failed")
		}
	})
}

// directoryUpdate hands a member's announcement, of the given version,
// to the directory, unless a newer one was handed already (the snapshot
// Join takes may be newer than events queued before it).
func (f *Federate) directoryUpdate(h FederateHandle, b []byte, version uint64) {
	if f.dirGone[h] {
		return // a late copy of a member that left
	}
	if f.dirVersion == nil {
		f.dirVersion = make(map[FederateHandle]uint64)
	}
	if v, ok := f.dirVersion[h]; ok && v >= version {
		return
	}
	f.dirVersion[h] = version
	if b == nil {
		f.dir.Remove(strconv.FormatUint(uint64(h), 10))
		return
	}
	if err := f.dir.Update(strconv.FormatUint(uint64(h), 10), b); err != nil {
		f.log.Debug().Err(err).Uint64("federate", uint64(h)).Msg("dropped a malformed data-plane announcement")
	}
}

// directoryEvent feeds the directory from a control event and reports
// whether the event was the directory's alone. Under mu.
func (f *Federate) directoryEvent(ev ControlEvent) bool {
	if ev.Kind == StateChanged && (ev.Key == keyDataPlane || ev.Key == keyModeDecided) {
		if f.dir != nil && ev.Key == keyDataPlane && ev.Member.Handle != f.handle {
			f.directoryUpdate(ev.Member.Handle, ev.Value, ev.Version)
		}
		return true
	}
	if f.dir != nil && (ev.Kind == MemberLost || ev.Kind == MemberResigned) && ev.Member.Handle != 0 {
		if f.dirGone == nil {
			f.dirGone = make(map[FederateHandle]bool)
		}
		f.dirGone[ev.Member.Handle] = true
		delete(f.dirVersion, ev.Member.Handle)
		f.dir.Remove(strconv.FormatUint(uint64(ev.Member.Handle), 10))
	}
	return false
}
