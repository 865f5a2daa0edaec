package testnet

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer"
)

// The scenario scripts' output lines: every event a federate saw, with
// names instead of handles. Other tools read these lines: keep their
// spelling.

// federations prints a list of federation executions: [this] when it
// holds only this script's, whose name has a random part; the time
// representation follows a name when it is not the default.
func (s *simulation) federations(list []peer.FederationExecutionInformation) string {
	names := []string{}
	for _, i := range list {
		n := i.FederationExecutionName
		if n == s.c.Federation {
			n = "this"
		}
		if t := i.LogicalTimeImplementationName; t != "" && t != string(peer.HLAfloat64Time) {
			n += "(" + t + ")"
		}
		names = append(names, n)
	}
	return fmt.Sprint(names)
}

// tagged formats " tag=%q" for a tag the script gave, "" otherwise.
func (s *simulation) tagged(tag []byte) string {
	if len(tag) == 0 {
		return ""
	}
	return fmt.Sprintf(" tag=%q", tag)
}

func num(t peer.LogicalTime) string {
	return strconv.FormatFloat(t.Float(), 'g', -1, 64)
}

func (s *simulation) fed(h peer.FederateHandle) string {
	if n, ok := s.fedName[h]; ok {
		return n
	}
	return fmt.Sprintf("federate(%d)", h)
}

func (s *simulation) obj(h peer.ObjectInstanceHandle) string {
	if l, ok := s.objLabel[h]; ok {
		return l
	}
	return fmt.Sprintf("object(%v)", h)
}

func shortName(q string) string {
	for _, root := range []string{"HLAobjectRoot.", "HLAinteractionRoot."} {
		if strings.HasPrefix(q, root) {
			return q[len(root):]
		}
	}
	return q
}

// interaction formats an interaction's class, then after (" to OBJ" for
// a directed one), then its parameters by name, sorted.
func (s *simulation) interaction(b *strings.Builder, class peer.InteractionClassHandle, after string, values peer.ParameterValues) {
	ic, known := s.fdd.InteractionClassByHandle(class)
	if known {
		b.WriteString(shortName(ic.QualifiedName))
	} else {
		fmt.Fprint(b, class)
	}
	b.WriteString(after)
	var kv []string
	for h, v := range values {
		pn := fmt.Sprint(h)
		if known {
			if p, ok := ic.ParameterByHandle(h); ok {
				pn = p.Name
			}
		}
		kv = append(kv, fmt.Sprintf("%s=%q", pn, v))
	}
	sort.Strings(kv)
	for _, x := range kv {
		b.WriteString(" " + x)
	}
}

// message formats the common tail of reflect, interaction and remove.
func (s *simulation) message(b *strings.Builder, tag []byte, sent, recv peer.OrderType, t peer.LogicalTime, producer peer.FederateHandle) {
	if s.userTags[string(tag)] {
		fmt.Fprintf(b, " tag=%q", tag)
	}
	if t != nil {
		fmt.Fprintf(b, " ts=%s", num(t))
	}
	fmt.Fprintf(b, " order=%v", recv)
	if sent != recv {
		fmt.Fprintf(b, " sent=%v", sent)
	}
	fmt.Fprintf(b, " from=%s", s.fed(producer))
}

func (s *simulation) format(ev peer.Event) string {
	if line, ok := s.momFormat(ev); ok {
		return line
	}
	var b strings.Builder
	switch e := ev.(type) {
	case peer.DiscoverObjectInstance:
		fmt.Fprintf(&b, "discover %s", s.obj(e.Object))
		if c, ok := s.fdd.ObjectClassByHandle(e.Class); ok {
			fmt.Fprintf(&b, " class=%s", shortName(c.QualifiedName))
		}
		if o, ok := s.objs[s.obj(e.Object)]; ok && o.name != "" && o.name != s.obj(e.Object) {
			fmt.Fprintf(&b, " name=%s", e.Name)
		}
		fmt.Fprintf(&b, " from=%s", s.fed(e.Producer))
	case peer.ReflectAttributeValues:
		fmt.Fprintf(&b, "reflect %s", s.obj(e.Object))
		var kv []string
		for h, v := range e.Values {
			kv = append(kv, fmt.Sprintf("%s=%q", s.attrName(h), v))
		}
		sort.Strings(kv)
		for _, x := range kv {
			b.WriteString(" " + x)
		}
		s.message(&b, e.Tag, e.SentOrder, e.ReceivedOrder, e.Time, e.Producer)
	case peer.ReceiveInteraction:
		b.WriteString("interaction ")
		s.interaction(&b, e.Class, "", e.Values)
		s.message(&b, e.Tag, e.SentOrder, e.ReceivedOrder, e.Time, e.Producer)
	case peer.ReceiveDirectedInteraction:
		b.WriteString("directed interaction ")
		s.interaction(&b, e.Class, " to "+s.obj(e.Object), e.Values)
		s.message(&b, e.Tag, e.SentOrder, e.ReceivedOrder, e.Time, e.Producer)
	case peer.RemoveObjectInstance:
		fmt.Fprintf(&b, "remove %s", s.obj(e.Object))
		s.message(&b, e.Tag, e.SentOrder, e.ReceivedOrder, e.Time, e.Producer)
	case peer.ObjectInstanceNameReservationSucceeded:
		fmt.Fprintf(&b, "reserved name=%s", e.Name)
	case peer.ObjectInstanceNameReservationFailed:
		fmt.Fprintf(&b, "reservation failed name=%s", e.Name)
	case peer.TimeRegulationEnabled:
		fmt.Fprintf(&b, "regulation enabled t=%s", num(e.Time))
	case peer.TimeConstrainedEnabled:
		fmt.Fprintf(&b, "constrained enabled t=%s", num(e.Time))
	case peer.TimeAdvanceGrant:
		fmt.Fprintf(&b, "grant t=%s", num(e.Time))
		if e.Request != lbts.TimeAdvanceRequest {
			fmt.Fprintf(&b, " (%v)", e.Request)
		}
	case peer.RequestRetraction:
		tag, ok := s.handleTag[e.Handle]
		if !ok {
			tag = e.Handle.String()
		}
		fmt.Fprintf(&b, "retraction requested %s from=%s", tag, s.fed(e.Handle.Federate))
	case peer.FederateJoined:
		fmt.Fprintf(&b, "joined %s", e.Name)
	case peer.FederateResigned:
		fmt.Fprintf(&b, "resigned %s", e.Name)
	case peer.SynchronizationPointRegistrationSucceeded:
		fmt.Fprintf(&b, "sync registered %s", e.Label)
	case peer.SynchronizationPointRegistrationFailed:
		fmt.Fprintf(&b, "sync failed %s reason=%s", e.Label, e.Reason)
	case peer.AnnounceSynchronizationPoint:
		fmt.Fprintf(&b, "announce %s tag=%q", e.Label, e.Tag)
	case peer.FederationSynchronized:
		fmt.Fprintf(&b, "synchronized %s", e.Label)
		if len(e.Failed) > 0 {
			names := make([]string, len(e.Failed))
			for i, h := range e.Failed {
				names[i] = s.fed(h)
			}
			sort.Strings(names)
			fmt.Fprintf(&b, " failed=%s", strings.Join(names, ","))
		}
	case peer.InitiateFederateSave:
		fmt.Fprintf(&b, "initiate save %s", e.Label)
		if e.HasTime {
			fmt.Fprintf(&b, " t=%s", num(e.Time))
		}
	case peer.FederationSaved:
		b.WriteString("saved")
	case peer.FederationNotSaved:
		fmt.Fprintf(&b, "not saved reason=%s", e.Reason)
	case peer.FederationSaveStatusResponse:
		b.WriteString("save status")
		for _, p := range e.Statuses {
			fmt.Fprintf(&b, " %s=%s", s.fed(p.Federate), p.Status)
		}
	case peer.RequestFederationRestoreSucceeded:
		fmt.Fprintf(&b, "restore requested %s", e.Label)
	case peer.RequestFederationRestoreFailed:
		fmt.Fprintf(&b, "restore request failed %s", e.Label)
	case peer.FederationRestoreBegun:
		b.WriteString("restore begun")
	case peer.InitiateFederateRestore:
		fmt.Fprintf(&b, "initiate restore %s", e.Label)
	case peer.FederationRestored:
		b.WriteString("restored")
	case peer.FederationNotRestored:
		fmt.Fprintf(&b, "not restored reason=%s", e.Reason)
	case peer.ReportFederationExecutions:
		b.WriteString("federations: " + s.federations(e.Executions))
	case peer.FederationRestoreStatusResponse:
		b.WriteString("restore status")
		for _, p := range e.Statuses {
			fmt.Fprintf(&b, " %s=%s", s.fed(p.PreRestore), p.Status)
		}
	case peer.FederateLost:
		fmt.Fprintf(&b, "lost %s", e.Name)
	case peer.ConnectionLost:
		fmt.Fprintf(&b, "connection lost: %s", e.Reason)
	case peer.StartRegistrationForObjectClass:
		fmt.Fprintf(&b, "start registration class=%s", s.className(e.Class))
	case peer.StopRegistrationForObjectClass:
		fmt.Fprintf(&b, "stop registration class=%s", s.className(e.Class))
	case peer.TurnInteractionsOn:
		fmt.Fprintf(&b, "turn interactions on class=%s", s.interactionName(e.Class))
	case peer.TurnInteractionsOff:
		fmt.Fprintf(&b, "turn interactions off class=%s", s.interactionName(e.Class))
	case peer.TurnUpdatesOnForObjectInstance:
		fmt.Fprintf(&b, "turn updates on %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
		if e.UpdateRate != "" {
			fmt.Fprintf(&b, " rate=%s", e.UpdateRate)
		}
	case peer.TurnUpdatesOffForObjectInstance:
		fmt.Fprintf(&b, "turn updates off %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.ProvideAttributeValueUpdate:
		fmt.Fprintf(&b, "provide %s attrs=%s tag=%q", s.obj(e.Object), s.attrNames(e.Attributes), e.Tag)
	case peer.AttributesInScope:
		fmt.Fprintf(&b, "in scope %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.AttributesOutOfScope:
		fmt.Fprintf(&b, "out of scope %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.MultipleObjectInstanceNameReservationSucceeded:
		fmt.Fprintf(&b, "reserved names=%s", strings.Join(e.Names, ","))
	case peer.MultipleObjectInstanceNameReservationFailed:
		fmt.Fprintf(&b, "reservation failed names=%s", strings.Join(e.Names, ","))
	case peer.ConfirmAttributeTransportationTypeChange:
		fmt.Fprintf(&b, "transport confirmed %s attrs=%s type=%v", s.obj(e.Object), s.attrNames(e.Attributes), e.Transportation)
	case peer.ReportAttributeTransportationType:
		fmt.Fprintf(&b, "transport %s %s=%v", s.obj(e.Object), s.attrName(e.Attribute), e.Transportation)
	case peer.RequestAttributeOwnershipRelease:
		fmt.Fprintf(&b, "release requested %s attrs=%s%s", s.obj(e.Object), s.attrNames(e.Attributes), s.tagged(e.Tag))
	case peer.RequestAttributeOwnershipAssumption:
		fmt.Fprintf(&b, "assumption requested %s attrs=%s%s", s.obj(e.Object), s.attrNames(e.Attributes), s.tagged(e.Tag))
	case peer.RequestDivestitureConfirmation:
		fmt.Fprintf(&b, "confirm divestiture %s attrs=%s%s", s.obj(e.Object), s.attrNames(e.Attributes), s.tagged(e.Tag))
	case peer.AttributeOwnershipAcquisitionNotification:
		fmt.Fprintf(&b, "acquired %s attrs=%s%s", s.obj(e.Object), s.attrNames(e.Attributes), s.tagged(e.Tag))
	case peer.AttributeOwnershipUnavailable:
		fmt.Fprintf(&b, "unavailable %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.ConfirmAttributeOwnershipAcquisitionCancellation:
		fmt.Fprintf(&b, "acquisition cancelled %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.InformAttributeOwnership:
		fmt.Fprintf(&b, "owner %s %s=%s", s.obj(e.Object), s.attrName(e.Attribute), s.fed(e.Owner))
	case peer.AttributeIsNotOwned:
		fmt.Fprintf(&b, "owner %s %s=none", s.obj(e.Object), s.attrName(e.Attribute))
	case peer.AttributeIsOwnedByRTI:
		fmt.Fprintf(&b, "owner %s %s=RTI", s.obj(e.Object), s.attrName(e.Attribute))
	case peer.ConfirmInteractionTransportationTypeChange:
		fmt.Fprintf(&b, "transport confirmed class=%s type=%v", s.interactionName(e.Class), e.Transportation)
	case peer.ReportInteractionTransportationType:
		fmt.Fprintf(&b, "transport %s class=%s type=%v", s.fed(e.Federate), s.interactionName(e.Class), e.Transportation)
	default:
		fmt.Fprintf(&b, "%T", ev)
	}
	return b.String()
}

func (s *simulation) className(h peer.ObjectClassHandle) string {
	if c, ok := s.fdd.ObjectClassByHandle(h); ok {
		return shortName(c.QualifiedName)
	}
	return fmt.Sprintf("class(%d)", h)
}

func (s *simulation) interactionName(h peer.InteractionClassHandle) string {
	if c, ok := s.fdd.InteractionClassByHandle(h); ok {
		return shortName(c.QualifiedName)
	}
	return fmt.Sprintf("interaction(%d)", h)
}

// attrNames lists attributes by name, sorted, comma-separated.
func (s *simulation) attrNames(hs []peer.AttributeHandle) string {
	ns := make([]string, len(hs))
	for i, h := range hs {
		ns[i] = s.attrName(h)
	}
	sort.Strings(ns)
	return strings.Join(ns, ",")
}

func (s *simulation) attrName(h peer.AttributeHandle) string {
	for _, c := range s.fdd.ObjectClasses {
		for _, a := range c.Attributes {
			if a.Handle == h {
				return a.Name
			}
		}
	}
	return fmt.Sprint(h)
}
