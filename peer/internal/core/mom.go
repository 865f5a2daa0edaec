package core

import (
	"fmt"
	"math"
	"slices"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/hla"
)

// The Management Object Model (IEEE 1516.1-2010 §11), the part about
// each federate: its HLAobjectRoot.HLAmanager.HLAfederate instance.
//
// With no central RTI, the truth about a federate lives in its own node,
// so that node is the RTI for its MOM instance. The instance's handle is
// (federate, 0): serial 0 is never given to a registration, so every
// node knows a MOM instance by its handle. The node announces the
// instance when it joins and to every discovery query for the class, as
// owners do; it answers requests for its values (by instance or by
// class) with an update carrying the current values, encoded as the
// federation's MIM declares them; and it is the only one that can: it
// holds no token a federate could give away, and the services that
// would update, delete or transfer a MOM instance refuse
// (momGuard). The instance goes when its federate resigns or is lost,
// whatever the resign action (removeFederate). A federate that
// subscribes to the class discovers its own federate's instance too, and
// gets its updates, as it would from a central RTI.
//
// Values are sent only when asked for: RequestAttributeValueUpdate or
// RequestClassAttributeValueUpdate.

// momSerial is the serial of every federate's MOM instance.
const momSerial = 0

// isMOM reports whether h is a federate's MOM instance.
func isMOM(h ObjectInstanceHandle) bool {
	return h.Serial == momSerial && h.Federate != 0 || h == federationMOM
}

// momState is the MOM's part of the core.
type momState struct {
	// class is HLAobjectRoot.HLAmanager.HLAfederate; nil when the MOM is
	// off or the FDD lacks it.
	class    *fomxml.ObjectClass
	instance *instance // this federate's MOM instance, as it announces it
	codec    *codec.Codec
	codecFDD *fomxml.FDD // the FDD codec was built for

	// Counts for the attributes.
	updatesSent, reflectionsReceived       uint64
	interactionsSent, interactionsReceived uint64
	registered, discovered                 uint64
	deleted, removed                       uint64
	// Instances this federate updated, and reflected, at least once
	// (instance.momSeen).
	updatedInstances, reflectedInstances uint64
	// Ticks spent granted and advancing since the last report.
	grantedTicks, advancingTicks int64
	// Interactions sent and received, by class: reliable [0], best
	// effort [1].
	sentByClass, receivedByClass map[uint64][2]uint64
	// HLAsetTiming: values every periodTicks (0: only when asked).
	periodTicks, sinceReport int64
	// HLAservice requests to carry out (momRunPending).
	pending []momReq
	// HLAsetServiceReporting: every service this federate invokes is
	// reported (ReportService), numbered by serial.
	reportServices bool
	serial         uint64
	// HLAsetExceptionReporting: the errors the federate's callbacks
	// return are reported (ReportException).
	reportExceptions bool

	// The federation's MOM instance (mom_interactions.go): its class,
	// and the last save, for its attributes.
	federationClass *fomxml.ObjectClass
	lastSave        string
	lastSaveAt      float64
	lastSaveTimed   bool
}

// count counts one interaction of class.
func (m *momState) count(mp map[uint64][2]uint64, class InteractionClassHandle, reliable bool) {
	v := mp[uint64(class)]
	if reliable {
		v[0]++
	} else {
		v[1]++
	}
	mp[uint64(class)] = v
}

// addCounts adds v to (*m)[k], making the map when needed.
func addCounts(m *map[uint64][2]uint64, k uint64, v [2]uint32) {
	if *m == nil {
		*m = make(map[uint64][2]uint64)
	}
	x := (*m)[k]
	x[0] += uint64(v[0])
	x[1] += uint64(v[1])
	(*m)[k] = x
}

// momObjectCounts sums the updates sent (upd) or reflections received of
// every instance, by registered class: those known now and those gone.
func (c *Core) momObjectCounts(upd bool) map[uint64][2]uint64 {
	out := make(map[uint64][2]uint64)
	gone := c.objects.goneRefl
	if upd {
		gone = c.objects.goneUpd
	}
	for k, v := range gone {
		out[k] = v
	}
	for _, in := range c.objects.inst {
		v := in.momRefl
		if upd {
			v = in.momUpd
		}
		if v != [2]uint32{} {
			addCounts(&out, uint64(in.class.Handle), v)
		}
	}
	return out
}

// momName is the name of federate name's MOM instance: it starts with
// HLA, so no federate can reserve it, and federate names are unique.
func momName(name string) string { return "HLAfederate." + name }

// momStart sets the MOM up: this federate's instance exists from its
// join, announced on its class's group, where this node listens for the
// queries and requests about it.
func (c *Core) momStart() {
	oc, ok := c.fdd.ObjectClass("HLAobjectRoot.HLAmanager.HLAfederate")
	if !ok || !c.cfg.MOM {
		return
	}
	c.mom.class = oc
	c.mom.instance = &instance{class: oc, known: oc, name: momName(c.cfg.Name), named: true}
	c.mom.sentByClass = make(map[uint64][2]uint64)
	c.mom.receivedByClass = make(map[uint64][2]uint64)
	c.mom.federationClass, _ = c.fdd.ObjectClass("HLAobjectRoot.HLAmanager.HLAfederation")
	c.applyGroups(c.routing.publishObject(oc))
	var d groupDelta
	c.routing.ref(momGroup, &d) // the requests about this federate
	c.applyGroups(d)
	c.sendAnnouncement(c.momHandle(), c.mom.instance)
}

func (c *Core) momHandle() ObjectInstanceHandle {
	return ObjectInstanceHandle{Federate: c.self, Serial: momSerial}
}

// momGuard refuses a service that would change MOM instance h: the RTI
// owns its attributes.
func momGuard(h ObjectInstanceHandle, err error) error {
	if !isMOM(h) {
		return nil
	}
	return fmt.Errorf("%w: MOM instance %v is the RTI's", err, h)
}

// momSelfDiscover lets this federate discover its own MOM instance once
// it subscribes to its class (or an ancestor) with attributes.
func (c *Core) momSelfDiscover() {
	if c.mom.class == nil || !c.federation.joined() {
		return
	}
	h := c.momHandle()
	if _, known := c.objects.inst[h]; known {
		return
	}
	evs, found := c.discover(nil, h, uint64(c.mom.class.Handle), c.mom.instance.name, c.self)
	if found {
		evs = c.rescopeTo(evs, h, false)
	}
	c.push(evs...)
}

// momRequested answers a request for the values of this federate's MOM
// instance: for the instance (obj) or for its class, the attributes of
// ps (all when ps is empty).
func (c *Core) momRequested(obj ObjectInstanceHandle, class ObjectClassHandle, ps []valuePair, tag []byte) bool {
	if c.mom.class == nil {
		return false
	}
	if obj.IsZero() {
		if class != c.mom.class.Handle {
			return false
		}
	} else if obj != c.momHandle() {
		return false
	}
	attrs := make([]AttributeHandle, 0, len(ps))
	for _, p := range ps {
		attrs = append(attrs, AttributeHandle(p.H))
	}
	c.momProvide(attrs, tag)
	return true
}

// momProvide sends the current values of attrs of this federate's MOM
// instance (every attribute when attrs is empty) to the class's
// subscribers, this federate among them.
func (c *Core) momProvide(attrs []AttributeHandle, tag []byte) {
	ps := c.momEncode(c.mom.class, attrs, c.momValue)
	if len(ps) == 0 {
		return
	}
	for _, p := range ps {
		if a, _ := c.mom.class.AttributeByHandle(AttributeHandle(p.H)); a.Name == "HLAtimeGrantedTime" || a.Name == "HLAtimeAdvancingTime" {
			c.mom.grantedTicks, c.mom.advancingTicks = 0, 0 // "since the last update"
			break
		}
	}
	m := &wireMsg{Kind: kindUpdate, Obj: c.momHandle(), Class: uint64(c.mom.class.Handle), Pairs: ps, Tag: slices.Clone(tag), Named: true}
	if c.endpoint.NewReceiverWithin(c.routing.objectRoute(c.mom.class), nameWindowTicks) {
		m.Name = c.mom.instance.name
	}
	if _, err := c.send(outMsg{group: c.routing.objectRoute(c.mom.class), reliable: true, msg: m}); err != nil {
		c.stats.Blocked++
	} else if c.tracer != nil {
		c.traceSend(m, false)
	}
	// This federate, when it subscribes, gets the update as the others
	// do (discovering the instance again after a local delete).
	m.Name = c.mom.instance.name
	c.momDeliverLocal(m, c.self)
}

// momEncode encodes the attributes attrs of MOM class oc (all when
// empty) that value knows, as the MIM declares their types, sorted; an
// attribute whose value the codec cannot encode as the FDD's MIM types it
// is left out.
func (c *Core) momEncode(oc *fomxml.ObjectClass, attrs []AttributeHandle, value func(name string) (any, bool)) []valuePair {
	if !c.momCodec() {
		return nil
	}
	var ps []valuePair
	for _, a := range oc.AllAttributes() {
		if len(attrs) > 0 && !slices.Contains(attrs, a.Handle) {
			continue
		}
		v, ok := value(a.Name)
		if !ok {
			continue
		}
		b, err := c.mom.codec.Encode(a.DataType, v)
		if err != nil {
			continue
		}
		ps = append(ps, valuePair{H: uint64(a.Handle), V: b})
	}
	sortPairs(ps)
	return ps
}

// momDeliverLocal hands m, a MOM message made here, to this federate as
// if received from from: held with its receive-order messages while it
// waits for a grant, as theirs are. It may run from within apply (a
// request), where evBuf is in use, so it takes a buffer of its own.
func (c *Core) momDeliverLocal(m *wireMsg, from FederateHandle) {
	d := delivery{from: from, received: Receive, reliable: true}
	if c.holdsRO() {
		c.timing.held = append(c.timing.held, heldMsg{m, d})
		return
	}
	c.push(c.apply(nil, m, d)...)
}

// momValue is the value of the MOM attribute name, as the codec takes
// it; false for an attribute this MOM does not know.
func (c *Core) momValue(name string) (any, bool) {
	m := &c.mom
	count := func(n uint64) any { return int64(min(n, math.MaxInt32)) }
	timeBytes := func(v float64) any { return timeOrEmpty(c, v, true) }
	ms := func(ticks int64) any {
		return int64(min(float64(ticks)*c.cfg.TickSeconds*1000, math.MaxInt32))
	}
	onOff := func(b bool) any {
		if b {
			return "HLAtrue"
		}
		return "HLAfalse"
	}
	switch name {
	case "HLAfederateHandle":
		return hla.EncodeHandle(c.self), true
	case "HLAfederateName":
		return c.cfg.Name, true
	case "HLAfederateType":
		return c.cfg.Type, true
	case "HLAfederateHost":
		return c.cfg.Host, true
	case "HLARTIversion":
		return c.rtiVersion(), true
	case "HLAFOMmoduleDesignatorList":
		var ds []any
		for _, mod := range c.fdd.Modules[1:] { // the MIM is not a FOM module
			ds = append(ds, mod.File)
		}
		return ds, true
	case "HLAtimeConstrained":
		return onOff(c.timeCore.Constrained()), true
	case "HLAtimeRegulating":
		return onOff(c.timeCore.Regulating()), true
	case "HLAasynchronousDelivery":
		return onOff(c.timing.async), true
	case "HLAfederateState":
		switch {
		case c.saveRestore.save.phase >= saveInitiated:
			return "FederateSaveInProgress", true
		case c.saveRestore.restore.phase >= restoreBegun:
			return "FederateRestoreInProgress", true
		}
		return "ActiveFederate", true
	case "HLAtimeManagerState":
		if c.timeCore.Advancing() {
			return "TimeAdvancing", true
		}
		return "TimeGranted", true
	case "HLAlogicalTime":
		return timeBytes(c.timeCore.Time()), true
	case "HLAlookahead":
		return timeBytes(c.timeCore.Lookahead()), true
	case "HLAGALT":
		galt, ok := c.timeCore.GALT()
		if !ok {
			return []byte{}, true // undefined: no regulating federate
		}
		return timeBytes(galt), true
	case "HLALITS":
		lits, ok := c.timeCore.LITS()
		if !ok {
			return []byte{}, true
		}
		return timeBytes(lits), true
	case "HLAROlength":
		return count(uint64(len(c.timing.held))), true
	case "HLATSOlength":
		return count(uint64(c.timeCore.Status().Queued)), true
	case "HLAreflectionsReceived":
		return count(m.reflectionsReceived), true
	case "HLAupdatesSent":
		return count(m.updatesSent), true
	case "HLAinteractionsReceived":
		return count(m.interactionsReceived), true
	case "HLAinteractionsSent":
		return count(m.interactionsSent), true
	case "HLAobjectInstancesThatCanBeDeleted":
		n := 0
		for h, in := range c.objects.inst {
			if _, ok := c.ownership.holds(h, privilegeToDelete(in.class)); ok {
				n++
			}
		}
		return count(uint64(n)), true
	case "HLAobjectInstancesUpdated":
		return count(m.updatedInstances), true
	case "HLAobjectInstancesReflected":
		return count(m.reflectedInstances), true
	case "HLAobjectInstancesDeleted":
		return count(m.deleted), true
	case "HLAobjectInstancesRemoved":
		return count(m.removed), true
	case "HLAobjectInstancesRegistered":
		return count(m.registered), true
	case "HLAobjectInstancesDiscovered":
		return count(m.discovered), true
	case "HLAtimeGrantedTime":
		return ms(m.grantedTicks), true
	case "HLAtimeAdvancingTime":
		return ms(m.advancingTicks), true
	case "HLAconveyRegionDesignatorSets":
		return momSwitch(c.fdd.Switches.ConveyRegionDesignatorSets), true // as the FDD sets it
	case "HLAconveyProducingFederate":
		return momSwitch(c.fdd.Switches.ConveyProducingFederate), true
	}
	return nil, false
}

// momSwitch is an HLAswitch value.
func momSwitch(on bool) string {
	if on {
		return "Enabled"
	}
	return "Disabled"
}

// momTick counts the time spent granted and advancing, and sends the
// MOM instance's values when HLAsetTiming's period is up.
func (c *Core) momTick() {
	if c.mom.tick(c.timeCore.Advancing(), c.federation.joined()) {
		c.momProvide(nil, nil)
	}
}

// tick counts one tick spent advancing or granted, and reports whether
// this federate's MOM instance is due to send its values (HLAsetTiming's
// period is up, and the federate is joined).
func (m *momState) tick(advancing, joined bool) (report bool) {
	if m.class == nil {
		return false
	}
	if advancing {
		m.advancingTicks++
	} else {
		m.grantedTicks++
	}
	if m.periodTicks > 0 && joined {
		if m.sinceReport++; m.sinceReport >= m.periodTicks {
			m.sinceReport = 0
			return true
		}
	}
	return false
}

// seen counts in's first update (bit momUpdated) or first reflection
// (momReflected) for the MOM's instance counts.
func (m *momState) seen(in *instance, bit uint8) {
	if in.momSeen&bit != 0 || m.class == nil {
		return
	}
	in.momSeen |= bit
	if bit == momUpdated {
		m.updatedInstances++
	} else {
		m.reflectedInstances++
	}
}

// countEvents counts the events of one Ready for the MOM's counters.
func (m *momState) countEvents(evs []Event) {
	if m.class == nil {
		return
	}
	for _, ev := range evs {
		switch ev.(type) {
		case hla.ReflectAttributeValues:
			m.reflectionsReceived++
		case hla.ReceiveInteraction, hla.ReceiveDirectedInteraction:
			m.interactionsReceived++
		case hla.DiscoverObjectInstance:
			m.discovered++
		case hla.RemoveObjectInstance:
			m.removed++
		}
	}
}

// Bits of instance.momSeen.
const (
	momUpdated uint8 = 1 << iota
	momReflected
)

// RTIVersion is what the MOM reports as HLARTIversion when
// Config.RTIVersion is empty.
const RTIVersion = "meshrti (IEEE 1516-2010)"

// rtiVersion is the MOM's HLARTIversion.
func (c *Core) rtiVersion() string {
	if c.cfg.RTIVersion != "" {
		return c.cfg.RTIVersion
	}
	return RTIVersion
}

// momServiceReport is the interaction that reports service invocations.
const momServiceReport = "HLAinteractionRoot.HLAmanager.HLAfederate.HLAreport.HLAreportServiceInvocation"

// ReportsServices reports whether this federate's service invocations
// are reported through the MOM (HLAsetServiceReporting); the driver then
// calls ReportService after each.
func (c *Core) ReportsServices() bool { return c.mom.reportServices }

// ReportService reports one service invoked at this federate, by it or
// by the RTI (a callback), by name, with the textual depictions of the
// arguments supplied and of the values returned (none when it failed),
// and its exception (HLAreportServiceInvocation). Serial numbers count
// from 0.
func (c *Core) ReportService(name string, supplied, returned []string, err error) {
	if !c.mom.reportServices || !c.federation.joined() || !c.momCodec() {
		return
	}
	serial := c.mom.serial
	c.mom.serial++
	exc := ""
	if err != nil {
		exc = err.Error()
		returned = nil
	}
	c.momReport("HLAreportServiceInvocation", map[string]any{
		"HLAservice": name, "HLAsuccessIndicator": err == nil, "HLAsuppliedArguments": stringList(supplied),
		"HLAreturnedArguments": stringList(returned), "HLAexception": exc, "HLAserialNumber": int64(min(serial, math.MaxInt32)),
	})
}

// stringList is ss for the codec: a list of strings.
func stringList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// ReportException reports the exception err a service invoked at this
// federate raised (by the federate, or a callback it returned an error
// from), with HLAreportException, when exception reporting is on
// (HLAsetExceptionReporting).
func (c *Core) ReportException(service string, err error) {
	if !c.mom.reportExceptions || !c.federation.joined() || !c.momCodec() {
		return
	}
	c.momReport("HLAreportException", map[string]any{"HLAservice": service, "HLAexception": err.Error()})
}

// SetServiceReporting turns the reports of this federate's service calls
// on or off, as HLAsetServiceReporting does (the HLA 4 switch). On is
// refused while the federate subscribes to HLAreportServiceInvocation,
// and without the MOM.
func (c *Core) SetServiceReporting(on bool) error {
	if on {
		if c.mom.class == nil {
			return fmt.Errorf("%w: this federate takes no part in the MOM", hla.ErrRTIinternalError)
		}
		if ic, ok := c.fdd.InteractionClass(momServiceReport); ok && c.declared.subInt[ic.Handle] {
			return fmt.Errorf("%w: the federate subscribes to HLAreportServiceInvocation", hla.ErrFederateServiceInvocationsAreBeingReportedViaMOM)
		}
	}
	c.mom.reportServices = on
	return nil
}

// SetExceptionReporting turns the reports of the errors this federate's
// callbacks return on or off, as HLAsetExceptionReporting does.
func (c *Core) SetExceptionReporting(on bool) error {
	if on && c.mom.class == nil {
		return fmt.Errorf("%w: this federate takes no part in the MOM", hla.ErrRTIinternalError)
	}
	c.mom.reportExceptions = on
	return nil
}

// ReportsExceptions reports whether exception reporting is on.
func (c *Core) ReportsExceptions() bool { return c.mom.reportExceptions }
