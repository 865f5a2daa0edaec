package core

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/hla"
)

// The MOM's interactions (IEEE 1516.1-2010 §11.3) and the federation's
// MOM instance.
//
// Every MOM interaction travels on one group (momGroup), where every
// node listens. A request about a federate
// (HLAmanager.HLAfederate.HLArequest.*, HLAadjust.*, HLAservice.*, whose
// HLAfederate parameter names it) is answered by that federate's node,
// the one that knows: the reports it sends are interactions like any
// other, for every subscriber. A request about the federation
// (HLAmanager.HLAfederation.HLArequest.*) is answered by every node for
// its own federate alone, from the state every node shares (the
// synchronization points, the FDD): each subscriber gets one report, and
// nothing more crosses the network. HLAreportFederateLost is made the
// same way, by every node when it takes a federate for lost.
//
// The federation's HLAobjectRoot.HLAmanager.HLAfederation instance is
// made the same way too: every node has it, with the handle (0, 1), and
// its federate discovers it when it subscribes to its class; its values
// come, locally, when asked for.
//
// The HLAservice interactions invoke a service on the named federate's
// behalf: its node queues them and carries them out between steps
// (momRunPending), reporting a failure with HLAreportMOMexception.
// HLAsetServiceReporting turns on the reports of the federate's own
// service calls (ReportService), HLAsetExceptionReporting those of the
// errors its callbacks return (ReportException). What this MOM does not
// do is answered with HLAreportMOMexception too: resigning, saving or
// restoring on a federate's behalf, HLAsetSwitches and
// HLAmodifyAttributeState.

// federationMOM is the handle of the federation's MOM instance.
var federationMOM = ObjectInstanceHandle{Federate: 0, Serial: 1}

// momReq is a MOM request to act on: its class's name under
// HLAinteractionRoot.HLAmanager, and its parameters by name.
type momReq struct {
	ic   *fomxml.InteractionClass
	name string // e.g. "HLAfederate.HLArequest.HLArequestPublications"
	args map[string][]byte
	bad  error // the request names no federate: it is refused
}

// momInteraction acts on a MOM interaction this node received, or its
// federate sent (from is then this federate).
func (c *Core) momInteraction(ic *fomxml.InteractionClass, ps []valuePair, from FederateHandle) {
	if c.mom.class == nil || !c.momCodec() {
		return
	}
	name := strings.TrimPrefix(ic.QualifiedName, "HLAinteractionRoot.HLAmanager.")
	r := momReq{ic: ic, name: name, args: make(map[string][]byte, len(ps))}
	for _, p := range ps {
		if pp, ok := ic.ParameterByHandle(ParameterHandle(p.H)); ok {
			r.args[pp.Name] = p.V
		}
	}
	switch {
	case strings.HasPrefix(name, "HLAfederation.HLArequest."):
	case strings.HasPrefix(name, "HLAfederation.HLAadjust."):
		if from != c.self {
			return // its sender's node says it is refused
		}
	case strings.HasPrefix(name, "HLAfederate.HLArequest."),
		strings.HasPrefix(name, "HLAfederate.HLAadjust."),
		strings.HasPrefix(name, "HLAfederate.HLAservice."):
		h, err := c.momHandleArg(r, "HLAfederate")
		switch {
		case err != nil && from == c.self:
			// Nobody can tell which federate it is about: its
			// sender's node says so (HLAreportMOMexception).
			r.bad = err
		case err != nil || FederateHandle(h) != c.self:
			return
		}
	default:
		return // a report
	}
	// Acted on between steps, in the order they came (momRunPending).
	for k, v := range r.args {
		r.args[k] = slices.Clone(v) // the message's buffer is reused
	}
	c.mom.pending = append(c.mom.pending, r)
}

// momArrived acts on a MOM interaction from another federate as it
// arrives.
func (c *Core) momArrived(m *wireMsg, from FederateHandle) {
	if c.mom.class == nil {
		return
	}
	if ic, ok := c.fdd.InteractionClassByHandle(InteractionClassHandle(m.Class)); ok && ic.IsMOM() {
		c.momInteraction(ic, m.Pairs, from)
	}
}

// momCodec builds the codec for the current FDD when needed; false when
// the FDD's types do not compile.
func (c *Core) momCodec() bool {
	if c.mom.codecFDD != c.fdd {
		enc, err := codec.New(c.fdd)
		if err != nil {
			return false
		}
		c.mom.codec, c.mom.codecFDD = enc, c.fdd
	}
	return true
}

// momFederateRequest answers a request about this federate.
func (c *Core) momFederateRequest(r momReq) {
	leaf := r.name[strings.LastIndexByte(r.name, '.')+1:]
	switch leaf {
	case "HLArequestPublications":
		c.momReportPublications()
	case "HLArequestSubscriptions":
		c.momReportSubscriptions()
	case "HLArequestObjectInstancesThatCanBeDeleted":
		c.momReportCounts("HLAreportObjectInstancesThatCanBeDeleted", "HLAobjectInstanceCounts", "", c.momInstanceCounts(func(h ObjectInstanceHandle, in *instance) bool {
			_, ok := c.ownership.holds(h, privilegeToDelete(in.class))
			return ok
		}))
	case "HLArequestObjectInstancesUpdated":
		c.momReportCounts("HLAreportObjectInstancesUpdated", "HLAobjectInstanceCounts", "", c.momInstanceCounts(func(_ ObjectInstanceHandle, in *instance) bool {
			return in.momSeen&momUpdated != 0
		}))
	case "HLArequestObjectInstancesReflected":
		c.momReportCounts("HLAreportObjectInstancesReflected", "HLAobjectInstanceCounts", "", c.momInstanceCounts(func(_ ObjectInstanceHandle, in *instance) bool {
			return in.momSeen&momReflected != 0
		}))
	case "HLArequestUpdatesSent":
		for t := range 2 {
			c.momReportCounts("HLAreportUpdatesSent", "HLAupdateCounts", transportName(t == 0), c.momClassCounts(c.momObjectCounts(true), t))
		}
	case "HLArequestReflectionsReceived":
		for t := range 2 {
			c.momReportCounts("HLAreportReflectionsReceived", "HLAreflectCounts", transportName(t == 0), c.momClassCounts(c.momObjectCounts(false), t))
		}
	case "HLArequestInteractionsSent":
		for t := range 2 {
			c.momReportInteractionCounts("HLAreportInteractionsSent", c.mom.sentByClass, t)
		}
	case "HLArequestInteractionsReceived":
		for t := range 2 {
			c.momReportInteractionCounts("HLAreportInteractionsReceived", c.mom.receivedByClass, t)
		}
	case "HLArequestObjectInstanceInformation":
		c.momReportInstance(r)
	case "HLArequestFOMmoduleData":
		c.momReportModule("HLAfederate.HLAreport.HLAreportFOMmoduleData", r, true)
	case "HLAsetServiceReporting", "HLAsetExceptionReporting":
		on, err := c.momBoolArg(r, "HLAreportingState")
		if err != nil {
			c.momException(r, "HLAreportingState is not a boolean", true)
			return
		}
		set := c.SetServiceReporting
		if leaf == "HLAsetExceptionReporting" {
			set = c.SetExceptionReporting
		}
		if err := set(on); err != nil {
			c.momException(r, err.Error(), false)
		}
	case "HLAsetTiming":
		v, err := c.momArg(r, "HLAreportPeriod")
		secs, _ := v.(int64)
		if err != nil || secs < 0 {
			c.momException(r, "HLAreportPeriod is not a number of seconds, 0 or more", true)
			return
		}
		c.mom.periodTicks = 0
		if secs > 0 && c.cfg.TickSeconds > 0 {
			c.mom.periodTicks = max(1, int64(float64(secs)/c.cfg.TickSeconds))
		}
		c.mom.sinceReport = 0
	default:
		c.momException(r, "not supported by meshrti", false)
	}
}

// momSend sends the MOM interaction HLAinteractionRoot.HLAmanager.<name>
// with the parameters args (encoded as the MIM declares them), to every
// subscriber, this federate among them; with local, to this federate
// alone.
func (c *Core) momSend(name string, args map[string]any, local bool) {
	ic, ok := c.fdd.InteractionClass("HLAinteractionRoot.HLAmanager." + name)
	if !ok {
		return
	}
	var ps []valuePair
	for n, v := range args {
		p, ok := ic.Parameter(n)
		if !ok {
			continue
		}
		b, err := c.mom.codec.Encode(p.DataType, v)
		if err != nil {
			c.stats.Malformed++ // a MIM that types the parameter otherwise
			continue
		}
		ps = append(ps, valuePair{H: uint64(p.Handle), V: b})
	}
	sortPairs(ps)
	m := &wireMsg{Kind: kindInteraction, Class: uint64(ic.Handle), Pairs: ps}
	if !local {
		if _, err := c.send(outMsg{group: momGroup, reliable: true, msg: m}); err != nil {
			c.stats.Blocked++
		} else if c.tracer != nil {
			c.traceSend(m, false)
		}
		// Not counted in HLAinteractionsSent: the RTI sends the
		// reports, not the federate.
	}
	c.momDeliverLocal(m, c.self)
}

// momReport sends the report leaf (under HLAmanager.HLAfederate.HLAreport)
// about this federate.
func (c *Core) momReport(leaf string, args map[string]any) {
	args["HLAfederate"] = hla.EncodeHandle(c.self)
	c.momSend("HLAfederate.HLAreport."+leaf, args, false)
}

// momException reports that request r failed, naming its class fully
// qualified, as the MIM asks.
func (c *Core) momException(r momReq, what string, paramErr bool) {
	c.momReport("HLAreportMOMexception", map[string]any{
		"HLAservice": r.ic.QualifiedName, "HLAexception": what, "HLAparameterError": paramErr,
	})
}

func handleList[H ~uint64](hs []H) []any {
	slices.Sort(hs)
	out := make([]any, len(hs))
	for i, h := range hs {
		out[i] = hla.EncodeHandle(h)
	}
	return out
}

func (c *Core) momReportPublications() {
	classes := keysOf(c.declared.pubObj)
	for _, oc := range classes {
		c.momReport("HLAreportObjectClassPublication", map[string]any{
			"HLAnumberOfClasses": len(classes), "HLAobjectClass": hla.EncodeHandle(oc),
			"HLAattributeList": handleList(keysOf(c.declared.pubObj[oc])),
		})
	}
	if len(classes) == 0 {
		c.momReport("HLAreportObjectClassPublication", map[string]any{"HLAnumberOfClasses": 0, "HLAattributeList": []any{}})
	}
	var ics []InteractionClassHandle
	for ic, ok := range c.declared.pubInt {
		if ok {
			ics = append(ics, ic)
		}
	}
	c.momReport("HLAreportInteractionPublication", map[string]any{"HLAinteractionClassList": handleList(ics)})
}

func (c *Core) momReportSubscriptions() {
	var classes []ObjectClassHandle
	for oc, attrs := range c.declared.subObj {
		if len(attrs) > 0 {
			classes = append(classes, oc)
		}
	}
	slices.Sort(classes)
	for _, oc := range classes {
		mode := c.declared.subMode[oc]
		c.momReport("HLAreportObjectClassSubscription", map[string]any{
			"HLAnumberOfClasses": len(classes), "HLAobjectClass": hla.EncodeHandle(oc), "HLAactive": mode.active,
			"HLAmaxUpdateRate": mode.rate, "HLAattributeList": handleList(keysOf(c.declared.subObj[oc])),
		})
	}
	if len(classes) == 0 {
		c.momReport("HLAreportObjectClassSubscription", map[string]any{"HLAnumberOfClasses": 0, "HLAactive": false, "HLAmaxUpdateRate": "", "HLAattributeList": []any{}})
	}
	var subs []any
	for _, ic := range keysOf(c.declared.subInt) {
		if c.declared.subInt[ic] {
			subs = append(subs, map[string]any{"HLAinteractionClass": hla.EncodeHandle(ic), "HLAactive": c.declared.subIntMode[ic]})
		}
	}
	c.momReport("HLAreportInteractionSubscription", map[string]any{"HLAinteractionClassList": append([]any{}, subs...)})
}

// momInstanceCounts counts the known instances that pass keep, by
// registered class.
func (c *Core) momInstanceCounts(keep func(ObjectInstanceHandle, *instance) bool) map[ObjectClassHandle]uint64 {
	out := make(map[ObjectClassHandle]uint64)
	for h, in := range c.objects.inst {
		if !isMOM(h) && h != federationMOM && keep(h, in) {
			out[in.class.Handle]++
		}
	}
	return out
}

// momClassCounts picks transportation t (0 reliable, 1 best effort) of
// per-class counts.
func (c *Core) momClassCounts(m map[uint64][2]uint64, t int) map[ObjectClassHandle]uint64 {
	out := make(map[ObjectClassHandle]uint64)
	for k, v := range m {
		if v[t] > 0 {
			out[ObjectClassHandle(k)] = v[t]
		}
	}
	return out
}

// momReportCounts sends report leaf with per-class counts in the
// parameter param (and the transportation, when named).
func (c *Core) momReportCounts(leaf, param, transport string, counts map[ObjectClassHandle]uint64) {
	list := []any{}
	for _, oc := range keysOf(counts) {
		list = append(list, map[string]any{"HLAobjectClass": hla.EncodeHandle(oc), "HLAcount": min(counts[oc], 1<<31-1)})
	}
	args := map[string]any{param: list}
	if transport != "" {
		args["HLAtransportation"] = transport
	}
	c.momReport(leaf, args)
}

func (c *Core) momReportInteractionCounts(leaf string, m map[uint64][2]uint64, t int) {
	list := []any{}
	keys := make([]uint64, 0, len(m))
	for k, v := range m {
		if v[t] > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		list = append(list, map[string]any{"HLAinteractionClass": hla.EncodeHandle(k), "HLAinteractionCount": min(m[k][t], 1<<31-1)})
	}
	c.momReport(leaf, map[string]any{"HLAtransportation": transportName(t == 0), "HLAinteractionCounts": list})
}

func (c *Core) momReportInstance(r momReq) {
	h, err := c.momInstanceArg(r)
	in, known := c.objects.inst[h]
	if err != nil || !known {
		c.momException(r, "HLAobjectInstance names no instance this federate knows", true)
		return
	}
	var owned []AttributeHandle
	for a := range c.ownership.heldOf(h) {
		owned = append(owned, a)
	}
	c.momReport("HLAreportObjectInstanceInformation", map[string]any{
		"HLAobjectInstance": h.Encode(), "HLAownedInstanceAttributeList": handleList(owned),
		"HLAregisteredClass": hla.EncodeHandle(in.class.Handle), "HLAknownClass": hla.EncodeHandle(in.known.Handle),
	})
}

// momReportModule answers a request for the text of a FOM module (its
// HLAFOMmoduleIndicator counts from 0, in the FDD's order after the
// MIM); about the federation, with federate false.
func (c *Core) momReportModule(name string, r momReq, federate bool) {
	v, err := c.momArg(r, "HLAFOMmoduleIndicator")
	i, _ := v.(int64)
	var text string
	if err == nil && c.cfg.ModuleText != nil {
		text, err = c.cfg.ModuleText(int(i))
	}
	switch {
	case err != nil || c.cfg.ModuleText == nil:
		if federate {
			c.momException(r, "HLAFOMmoduleIndicator names no FOM module", true)
		}
		return
	case federate:
		c.momReport("HLAreportFOMmoduleData", map[string]any{"HLAFOMmoduleIndicator": i, "HLAFOMmoduleData": text})
	default:
		c.momSend(name, map[string]any{"HLAFOMmoduleIndicator": i, "HLAFOMmoduleData": text}, true)
	}
}

// momFederationRequest answers a request about the federation, for this
// federate alone (every node does the same for its own).
func (c *Core) momFederationRequest(r momReq) {
	switch r.name {
	case "HLAfederation.HLArequest.HLArequestSynchronizationPoints":
		labels := []any{}
		for _, l := range keysOf(c.syncPoints.points) {
			if !c.syncPoints.points[l].done {
				labels = append(labels, l)
			}
		}
		c.momSend("HLAfederation.HLAreport.HLAreportSynchronizationPoints", map[string]any{"HLAsyncPoints": labels}, true)
	case "HLAfederation.HLArequest.HLArequestSynchronizationPointStatus":
		for _, l := range keysOf(c.syncPoints.points) {
			p := c.syncPoints.points[l]
			if p.done {
				continue
			}
			feds := []any{}
			for _, f := range c.federation.everyone(c.self) {
				if !p.member(f) {
					continue
				}
				st := "MovingToSynchPoint"
				if p.achieved[f] {
					st = "WaitingForRestOfFederation"
				}
				feds = append(feds, map[string]any{"HLAfederate": hla.EncodeHandle(f), "HLAfederateSynchStatus": st})
			}
			c.momSend("HLAfederation.HLAreport.HLAreportSynchronizationPointStatus", map[string]any{"HLAsyncPointName": l, "HLAsyncPointFederates": feds}, true)
		}
	case "HLAfederation.HLArequest.HLArequestMIMdata":
		text := ""
		if c.cfg.MIMText != nil {
			text = c.cfg.MIMText()
		}
		c.momSend("HLAfederation.HLAreport.HLAreportMIMdata", map[string]any{"HLAMIMdata": text}, true)
	case "HLAfederation.HLArequest.HLArequestFOMmoduleData":
		c.momReportModule("HLAfederation.HLAreport.HLAreportFOMmoduleData", r, false)
	}
}

// momLost reports federate h lost (HLAreportFederateLost), to this
// federate alone: every node reports it to its own.
func (c *Core) momLost(h FederateHandle, name string) {
	if c.mom.class == nil || !c.momCodec() {
		return
	}
	c.momSend("HLAfederate.HLAreport.HLAreportFederateLost", map[string]any{
		"HLAfederate": hla.EncodeHandle(h), "HLAfederateName": name,
		"HLAtimeStamp":        timeOrEmpty(c, c.timeCore.Time(), true),
		"HLAfaultDescription": "the control plane took it for lost (no contact within the failure detection time)",
	}, true)
}

func timeOrEmpty(c *Core, v float64, ok bool) []byte {
	if !ok {
		return []byte{}
	}
	b, err := c.timeKind.Factory().Encode(c.timeKind.Make(v))
	if err != nil {
		return []byte{}
	}
	return b
}

// ---- The federation's MOM instance ----

// momFederationDiscover lets this federate discover the federation's MOM
// instance once it subscribes to its class (or an ancestor).
func (c *Core) momFederationDiscover() {
	oc := c.mom.federationClass
	if oc == nil || !c.federation.joined() {
		return
	}
	if _, known := c.objects.inst[federationMOM]; known {
		return
	}
	evs, found := c.discover(nil, federationMOM, uint64(oc.Handle), "HLAfederation."+c.cfg.Federation, 0)
	if found {
		evs = c.rescopeTo(evs, federationMOM, false)
	}
	c.push(evs...)
}

// momFederationValues reflects the federation's MOM instance's attrs (all
// when empty) to this federate.
func (c *Core) momFederationValues(attrs []AttributeHandle, tag []byte) {
	oc := c.mom.federationClass
	if oc == nil {
		return
	}
	ps := c.momEncode(oc, attrs, c.momFederationValue)
	m := &wireMsg{Kind: kindUpdate, Obj: federationMOM, Class: uint64(oc.Handle), Pairs: ps, Tag: slices.Clone(tag), Named: true, Name: "HLAfederation." + c.cfg.Federation}
	c.momDeliverLocal(m, 0)
}

func (c *Core) momFederationValue(name string) (any, bool) {
	switch name {
	case "HLAfederationName":
		return c.cfg.Federation, true
	case "HLAfederatesInFederation":
		return handleList(c.federation.everyone(c.self)), true
	case "HLARTIversion":
		return c.rtiVersion(), true
	case "HLAMIMdesignator":
		return c.fdd.Modules[0].File, true
	case "HLAFOMmoduleDesignatorList":
		var ds []any
		for _, mod := range c.fdd.Modules[1:] {
			ds = append(ds, mod.File)
		}
		return append([]any{}, ds...), true
	case "HLAcurrentFDD":
		var ds []string
		for _, mod := range c.fdd.Modules {
			ds = append(ds, mod.File)
		}
		return strings.Join(ds, "\n"), true
	case "HLAtimeImplementationName":
		return string(c.timeKind), true
	case "HLAlastSaveName":
		return c.mom.lastSave, true
	case "HLAlastSaveTime":
		return timeOrEmpty(c, c.mom.lastSaveAt, c.mom.lastSaveTimed), true
	case "HLAnextSaveName":
		if c.saveRestore.save.phase == saveIdle {
			return "", true
		}
		return c.saveRestore.save.label, true
	case "HLAnextSaveTime":
		return timeOrEmpty(c, c.saveRestore.save.at, c.saveRestore.save.phase != saveIdle && c.saveRestore.save.timed), true
	case "HLAautoProvide":
		if c.fdd.Switches.AutoProvide {
			return "Enabled", true
		}
		return "Disabled", true
	}
	return nil, false
}

// keysOf lists m's keys, sorted.
func keysOf[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// trueKeys is the keys of m whose value is true, in ascending order.
func trueKeys[K cmp.Ordered](m map[K]bool) []K {
	ks := make([]K, 0, len(m))
	for k, v := range m {
		if v {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// ---- HLAservice: services invoked on a federate's behalf ----

// errMOMParam marks a request parameter that is missing or does not
// decode (HLAreportMOMexception's HLAparameterError).
var errMOMParam = errors.New("parameter error")

// momRunPending acts on the MOM requests received since the last time,
// in order: between steps, as the federate's own calls are, never from
// within the delivery of a message. A service that fails is reported
// with HLAreportMOMexception.
func (c *Core) momRunPending() {
	for len(c.mom.pending) > 0 {
		r := c.mom.pending[0]
		c.mom.pending = c.mom.pending[1:]
		if !c.federation.joined() {
			continue
		}
		switch {
		case r.bad != nil:
			c.momException(r, r.bad.Error(), true)
		case strings.HasPrefix(r.name, "HLAfederation.HLAadjust."):
			c.momException(r, "not supported by meshrti: the federation's switches are its FDD's", false)
		case strings.HasPrefix(r.name, "HLAfederation."):
			c.momFederationRequest(r)
		case strings.HasPrefix(r.name, "HLAfederate.HLAservice."):
			if err := c.momInvoke(r); err != nil {
				c.momException(r, err.Error(), errors.Is(err, errMOMParam))
			}
		default:
			c.momFederateRequest(r)
		}
	}
	c.mom.pending = nil
}

// momArg decodes parameter name of r as its type in r's class.
func (c *Core) momArg(r momReq, name string) (any, error) {
	b, ok := r.args[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s is missing", errMOMParam, name)
	}
	p, ok := r.ic.Parameter(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a parameter of %s", errMOMParam, name, r.ic.QualifiedName)
	}
	v, err := c.mom.codec.Decode(p.DataType, b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errMOMParam, name, err)
	}
	return v, nil
}

// handleBytes returns the bytes of a handle parameter: the MIM's
// HLAhandle is a variable array of bytes (a 4-byte count, then the
// handle's bytes), and some clients give the handle's bytes alone, as a
// 1516e handle's encode writes them; both are taken.
func handleBytes(b []byte) []byte {
	if len(b) >= 4 && uint64(binary.BigEndian.Uint32(b)) == uint64(len(b)-4) {
		return b[4:]
	}
	return b
}

// handleValue decodes the bytes of a handle of one number: meshrti's 8,
// or 4 from a client that writes handles as 32-bit numbers.
func handleValue[H ~uint64](b []byte) (H, error) {
	if len(b) == 4 {
		return H(binary.BigEndian.Uint32(b)), nil
	}
	return hla.DecodeHandle[H](b)
}

func (c *Core) momHandleArg(r momReq, name string) (uint64, error) {
	b, ok := r.args[name]
	if !ok {
		return 0, fmt.Errorf("%w: %s is missing", errMOMParam, name)
	}
	h, err := handleValue[uint64](handleBytes(b))
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %w", errMOMParam, name, err)
	}
	return h, nil
}

func (c *Core) momInstanceArg(r momReq) (ObjectInstanceHandle, error) {
	b, ok := r.args["HLAobjectInstance"]
	if !ok {
		return ObjectInstanceHandle{}, fmt.Errorf("%w: HLAobjectInstance is missing", errMOMParam)
	}
	h, err := hla.DecodeObjectInstanceHandle(handleBytes(b))
	if err != nil {
		return ObjectInstanceHandle{}, fmt.Errorf("%w: HLAobjectInstance: %w", errMOMParam, err)
	}
	return h, nil
}

func (c *Core) momAttrsArg(r momReq) ([]AttributeHandle, error) {
	v, err := c.momArg(r, "HLAattributeList")
	if err != nil {
		return nil, err
	}
	list, _ := v.([]any)
	out := make([]AttributeHandle, 0, len(list))
	for _, e := range list {
		b, _ := e.([]byte)
		h, err := handleValue[AttributeHandle](b)
		if err != nil {
			return nil, fmt.Errorf("%w: HLAattributeList: %w", errMOMParam, err)
		}
		out = append(out, h)
	}
	return out, nil
}

// momTimeArg decodes a logical time or interval; ok false when the value
// is empty (no time).
func (c *Core) momTimeArg(r momReq, name string) (LogicalTime, bool, error) {
	v, err := c.momArg(r, name)
	if err != nil {
		return nil, false, err
	}
	b, _ := v.([]byte)
	if len(b) == 0 {
		return nil, false, nil
	}
	t, err := c.timeKind.Factory().Decode(b)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %w", errMOMParam, name, err)
	}
	return t, true, nil
}

func (c *Core) momBoolArg(r momReq, name string) (bool, error) {
	v, err := c.momArg(r, name)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%w: %s is not a boolean", errMOMParam, name)
	}
	return b, nil
}

func (c *Core) momOrderArg(r momReq) (OrderType, error) {
	return momEnumArg(c, r, "HLAsendOrder", map[string]OrderType{"Receive": hla.Receive, "TimeStamp": hla.TimeStamp})
}

func (c *Core) momTransportArg(r momReq) (hla.TransportationType, error) {
	return momEnumArg(c, r, "HLAtransportation", map[string]hla.TransportationType{"HLAreliable": hla.HLAreliable, "HLAbestEffort": hla.HLAbestEffort})
}

// momEnumArg decodes the parameter name, a string, to its value in
// values; any other string is an error.
func momEnumArg[T any](c *Core, r momReq, name string, values map[string]T) (T, error) {
	var zero T
	v, err := c.momArg(r, name)
	if err != nil {
		return zero, err
	}
	if s, ok := v.(string); ok {
		if t, ok := values[s]; ok {
			return t, nil
		}
	}
	return zero, fmt.Errorf("%w: %s %v", errMOMParam, name, v)
}

// momInvoke carries out one HLAservice request.
func (c *Core) momInvoke(r momReq) error {
	if err := c.SaveRestoreError(); err != nil {
		return err
	}
	leaf := r.name[strings.LastIndexByte(r.name, '.')+1:]
	switch leaf {
	case "HLAsynchronizationPointAchieved":
		v, err := c.momArg(r, "HLAlabel")
		if err != nil {
			return err
		}
		label, _ := v.(string)
		return c.SynchronizationPointAchieved(label, true)
	case "HLAenableTimeRegulation", "HLAmodifyLookahead":
		l, ok, err := c.momTimeArg(r, "HLAlookahead")
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: HLAlookahead is empty", errMOMParam)
		}
		if leaf == "HLAmodifyLookahead" {
			return c.ModifyLookahead(l)
		}
		return c.EnableTimeRegulation(l)
	case "HLAdisableTimeRegulation":
		return c.DisableTimeRegulation()
	case "HLAenableTimeConstrained":
		return c.EnableTimeConstrained()
	case "HLAdisableTimeConstrained":
		return c.DisableTimeConstrained()
	case "HLAenableAsynchronousDelivery":
		return c.EnableAsynchronousDelivery()
	case "HLAdisableAsynchronousDelivery":
		return c.DisableAsynchronousDelivery()
	case "HLAtimeAdvanceRequest", "HLAtimeAdvanceRequestAvailable", "HLAnextMessageRequest", "HLAnextMessageRequestAvailable", "HLAflushQueueRequest":
		t, ok, err := c.momTimeArg(r, "HLAtimeStamp")
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: HLAtimeStamp is empty", errMOMParam)
		}
		kind := map[string]lbts.RequestKind{
			"HLAtimeAdvanceRequest": lbts.TimeAdvanceRequest, "HLAtimeAdvanceRequestAvailable": lbts.TimeAdvanceRequestAvailable,
			"HLAnextMessageRequest": lbts.NextMessageRequest, "HLAnextMessageRequestAvailable": lbts.NextMessageRequestAvailable,
			"HLAflushQueueRequest": lbts.FlushQueueRequest,
		}[leaf]
		return c.TimeAdvance(kind, t)
	case "HLApublishObjectClassAttributes", "HLAunpublishObjectClassAttributes", "HLAsubscribeObjectClassAttributes", "HLAunsubscribeObjectClassAttributes":
		class, err := c.momHandleArg(r, "HLAobjectClass")
		if err != nil {
			return err
		}
		attrs, err := c.momAttrsArg(r)
		if err != nil {
			return err
		}
		switch leaf {
		case "HLApublishObjectClassAttributes":
			return c.PublishObjectClassAttributes(ObjectClassHandle(class), attrs)
		case "HLAunpublishObjectClassAttributes":
			return c.UnpublishObjectClassAttributes(ObjectClassHandle(class), attrs)
		case "HLAunsubscribeObjectClassAttributes":
			return c.UnsubscribeObjectClassAttributes(ObjectClassHandle(class), attrs)
		}
		active, err := c.momBoolArg(r, "HLAactive")
		if err != nil {
			return err
		}
		return c.SubscribeObjectClassAttributes(ObjectClassHandle(class), attrs, active, "")
	case "HLApublishInteractionClass", "HLAunpublishInteractionClass", "HLAsubscribeInteractionClass", "HLAunsubscribeInteractionClass", "HLAchangeInteractionOrderType", "HLArequestInteractionTransportationTypeChange":
		h, err := c.momHandleArg(r, "HLAinteractionClass")
		if err != nil {
			return err
		}
		class := InteractionClassHandle(h)
		switch leaf {
		case "HLApublishInteractionClass":
			return c.PublishInteractionClass(class)
		case "HLAunpublishInteractionClass":
			return c.UnpublishInteractionClass(class)
		case "HLAunsubscribeInteractionClass":
			return c.UnsubscribeInteractionClass(class)
		case "HLAchangeInteractionOrderType":
			order, err := c.momOrderArg(r)
			if err != nil {
				return err
			}
			return c.ChangeInteractionOrderType(class, order)
		case "HLArequestInteractionTransportationTypeChange":
			t, err := c.momTransportArg(r)
			if err != nil {
				return err
			}
			return c.RequestInteractionTransportationTypeChange(class, t)
		}
		active, err := c.momBoolArg(r, "HLAactive")
		if err != nil {
			return err
		}
		return c.SubscribeInteractionClass(class, active)
	case "HLAdeleteObjectInstance", "HLAlocalDeleteObjectInstance":
		obj, err := c.momInstanceArg(r)
		if err != nil {
			return err
		}
		if leaf == "HLAlocalDeleteObjectInstance" {
			return c.LocalDeleteObjectInstance(obj)
		}
		var tag []byte
		if v, err := c.momArg(r, "HLAtag"); err == nil {
			tag, _ = v.([]byte)
		}
		var t LogicalTime
		if _, present := r.args["HLAtimeStamp"]; present {
			var ok bool
			if t, ok, err = c.momTimeArg(r, "HLAtimeStamp"); err != nil {
				return err
			} else if !ok {
				t = nil
			}
		}
		_, err = c.DeleteObjectInstance(obj, tag, t)
		return err
	case "HLAchangeAttributeOrderType", "HLAunconditionalAttributeOwnershipDivestiture", "HLArequestAttributeTransportationTypeChange":
		obj, err := c.momInstanceArg(r)
		if err != nil {
			return err
		}
		attrs, err := c.momAttrsArg(r)
		if err != nil {
			return err
		}
		switch leaf {
		case "HLAchangeAttributeOrderType":
			order, err := c.momOrderArg(r)
			if err != nil {
				return err
			}
			return c.ChangeAttributeOrderType(obj, order, attrs)
		case "HLArequestAttributeTransportationTypeChange":
			t, err := c.momTransportArg(r)
			if err != nil {
				return err
			}
			return c.RequestAttributeTransportationTypeChange(obj, attrs, t)
		}
		return c.UnconditionalAttributeOwnershipDivestiture(obj, attrs)
	case "HLAresignFederationExecution", "HLAfederateSaveBegun", "HLAfederateSaveComplete", "HLAfederateRestoreComplete":
		return errors.New("not invoked on a federate's behalf by meshrti: the federate itself resigns, saves and restores (its own state goes with them)")
	}
	return errors.New("not supported by meshrti")
}
