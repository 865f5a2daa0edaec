package testnet

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
)

// The scenario commands of the Management Object Model:
//
//	mom-subscribe NAME
//	    subscribes NAME to every attribute of HLAmanager.HLAfederate and
//	    HLAmanager.HLAfederation, and to every MOM report interaction.
//	mom-request NAME [of=F|federation] attrs=A,B
//	    asks for attributes of F's HLAfederate instance (of=federation:
//	    the federation's instance; no of: every federate's).
//	mom-send NAME class=HLAfederate.HLArequest.HLArequestPublications [to=F] [object=OBJ] [period=S] [index=I] [action=A] [label=L]
//	    sends a MOM interaction (the class under HLAinteractionRoot.HLAmanager),
//	    about federate F.
//
// and its lines: "A: mom discover HLAfederate.B HLAfederation.this" (the
// instances discovered in the step, sorted, after its other lines), "A: mom
// HLAfederate.B HLAfederateName=B HLAlogicalTime=10" (the attributes
// reflected, decoded), "A: mom remove HLAfederate.B", "A: mom report
// HLAreportFederateLost HLAfederate=C HLAfederateName=C ..." (the
// parameters, decoded; handles by their names).

// momCodec returns the codec of the script's FDD.
func (s *simulation) momCodec() (*codec.Codec, error) {
	if s.momEnc == nil {
		enc, err := codec.New(s.fdd)
		if err != nil {
			return nil, err
		}
		s.momEnc = enc
	}
	return s.momEnc, nil
}

// momSubscribe subscribes to every attribute of HLAfederate and
// HLAfederation and to every MOM report interaction.
func (s *simulation) momSubscribe(c *call) (*serviceError, error) {
	f, name := c.f, c.name
	for _, cn := range []string{"HLAobjectRoot.HLAmanager.HLAfederate", "HLAobjectRoot.HLAmanager.HLAfederation"} {
		oc, ok := s.fdd.ObjectClass(cn)
		if !ok {
			return nil, fmt.Errorf("no %s", cn)
		}
		var attrs []peer.AttributeHandle
		for _, at := range oc.AllAttributes() {
			attrs = append(attrs, at.Handle)
		}
		if err := f.SubscribeObjectClassAttributes(oc.Handle, attrs...); err != nil {
			return fail(name, err)
		}
	}
	for _, ic := range s.fdd.InteractionClasses {
		if ic.IsMOM() && len(ic.Children) == 0 && strings.Contains(ic.QualifiedName, ".HLAreport.") {
			if err := f.SubscribeInteractionClass(ic.Handle); err != nil {
				return fail(name, err)
			}
		}
	}
	return nil, nil
}

// momRequest asks for attributes of a federate's instance, the
// federation's, or every federate's.
func (s *simulation) momRequest(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	cn := "HLAobjectRoot.HLAmanager.HLAfederate"
	of, hasOf := a.get("of")
	if of == "federation" {
		cn = "HLAobjectRoot.HLAmanager.HLAfederation"
	}
	oc, ok := s.fdd.ObjectClass(cn)
	if !ok {
		return nil, fmt.Errorf("no %s", cn)
	}
	names, err := a.list("attrs")
	if err != nil {
		return nil, err
	}
	var attrs []peer.AttributeHandle
	for _, n := range names {
		at, ok := oc.Attribute(n)
		if !ok {
			return nil, fmt.Errorf("no attribute %s of %s", n, cn)
		}
		attrs = append(attrs, at.Handle)
	}
	if !hasOf {
		return fail(name, f.RequestAttributeValueUpdateForClass(oc.Handle, nil, attrs...))
	}
	inst := "HLAfederation." + s.c.Federation
	if of != "federation" {
		inst = "HLAfederate." + of
	}
	h, err := f.GetObjectInstanceHandle(inst)
	if err != nil {
		return fail(name, err)
	}
	return fail(name, f.RequestAttributeValueUpdate(h, nil, attrs...))
}

// momSend publishes and sends a MOM interaction.
func (s *simulation) momSend(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	cn, err := a.need("class")
	if err != nil {
		return nil, err
	}
	ic, ok := s.fdd.InteractionClass("HLAinteractionRoot.HLAmanager." + cn)
	if !ok {
		return nil, fmt.Errorf("no MOM interaction %s", cn)
	}
	vals, err := s.momArgs(ic, a)
	if err != nil {
		return nil, err
	}
	if err := f.PublishInteractionClass(ic.Handle); err != nil {
		return fail(name, err)
	}
	return fail(name, f.SendInteraction(ic.Handle, vals, nil))
}

// momArgs encodes the parameters mom-send names.
func (s *simulation) momArgs(ic *fomxml.InteractionClass, a *args) (peer.ParameterValues, error) {
	enc, err := s.momCodec()
	if err != nil {
		return nil, err
	}
	vals := peer.ParameterValues{}
	set := func(param string, v any) error {
		p, ok := ic.Parameter(param) // its own or an ancestor's
		if !ok {
			return fmt.Errorf("%s has no parameter %s", ic.QualifiedName, param)
		}
		b, err := enc.Encode(p.DataType, v)
		if err != nil {
			return fmt.Errorf("%s: %w", param, err)
		}
		vals[p.Handle] = b
		return nil
	}
	if to, ok := a.get("to"); ok {
		i, ok := s.fedIdx[to]
		if !ok {
			return nil, fmt.Errorf("unknown federate %s", to)
		}
		if err := set("HLAfederate", peer.EncodeHandle(s.c.Feds[i].Handle())); err != nil {
			return nil, err
		}
	}
	if o, ok := a.get("object"); ok {
		so, ok := s.objs[o]
		if !ok {
			return nil, fmt.Errorf("unknown object %s", o)
		}
		if err := set("HLAobjectInstance", so.h.Encode()); err != nil {
			return nil, err
		}
	}
	for _, p := range []struct{ arg, param string }{{"period", "HLAreportPeriod"}, {"index", "HLAFOMmoduleIndicator"}} {
		if v, ok := a.get(p.arg); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.arg, err)
			}
			if err := set(p.param, n); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range []struct{ arg, param string }{{"action", "HLAresignAction"}, {"label", "HLAlabel"}} {
		if v, ok := a.get(p.arg); ok {
			if err := set(p.param, v); err != nil {
				return nil, err
			}
		}
	}
	return vals, nil
}

// momFormat formats the MOM's events; false for the others.
func (s *simulation) momFormat(ev peer.Event) (string, bool) {
	switch e := ev.(type) {
	case peer.DiscoverObjectInstance:
		oc, ok := s.fdd.ObjectClassByHandle(e.Class)
		if !ok || !oc.IsMOM() {
			return "", false
		}
		n := strings.ReplaceAll(e.Name, s.c.Federation, "this")
		s.momObjs[e.Object] = n
		return "mom discover " + n, true
	case peer.RemoveObjectInstance:
		n, ok := s.momObjs[e.Object]
		if !ok {
			return "", false
		}
		delete(s.momObjs, e.Object)
		return "mom remove " + n, true
	case peer.ReflectAttributeValues:
		n, ok := s.momObjs[e.Object]
		if !ok {
			return "", false
		}
		var kv []string
		for h, b := range e.Values {
			at := s.momAttr(h)
			if at == nil {
				continue
			}
			kv = append(kv, at.Name+"="+s.momValue(at.Name, at.DataType, b))
		}
		sort.Strings(kv)
		return "mom " + n + " " + strings.Join(kv, " "), true
	case peer.ReceiveInteraction:
		ic, ok := s.fdd.InteractionClassByHandle(e.Class)
		if !ok || !ic.IsMOM() {
			return "", false
		}
		var kv []string
		for _, p := range ic.AllParameters() {
			if b, ok := e.Values[p.Handle]; ok {
				kv = append(kv, p.Name+"="+s.momValue(p.Name, p.DataType, b))
			}
		}
		sort.Strings(kv)
		return "mom report " + ic.Name + " " + strings.Join(kv, " "), true
	}
	return "", false
}

func (s *simulation) momAttr(h peer.AttributeHandle) *fomxml.Attribute {
	for _, cn := range []string{"HLAobjectRoot.HLAmanager.HLAfederate", "HLAobjectRoot.HLAmanager.HLAfederation"} {
		if oc, ok := s.fdd.ObjectClass(cn); ok {
			if at, ok := oc.AttributeByHandle(h); ok {
				return at
			}
		}
	}
	return nil
}

// momValue decodes one MOM value for printing: handles by the names of
// what they designate, times as numbers.
func (s *simulation) momValue(name, dataType string, b []byte) string {
	enc, err := s.momCodec()
	if err != nil {
		return "?"
	}
	v, err := enc.Decode(dataType, b)
	if err != nil {
		return "undecodable"
	}
	return s.momString(name, dataType, v)
}

func (s *simulation) momString(name, dataType string, v any) string {
	switch x := v.(type) {
	case []byte:
		switch dataType {
		case "HLAlogicalTime", "HLAtimeInterval":
			if len(x) == 0 {
				return "none"
			}
			t, err := s.c.Feds[0].GetTimeFactory().Decode(x)
			if err != nil {
				return "undecodable"
			}
			return num(t)
		case "HLAhandle":
			return s.momHandle(name, x)
		}
		return fmt.Sprintf("%x", x)
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, s.momString(name, "HLAhandle", e)) // the MIM's lists of bytes are of handles
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		var parts []string
		for _, k := range keys {
			dt := ""
			if _, isHandle := x[k].([]byte); isHandle {
				dt = "HLAhandle"
			}
			parts = append(parts, k+"="+s.momString(k, dt, x[k]))
		}
		return "{" + strings.Join(parts, " ") + "}"
	case string:
		x = strings.ReplaceAll(x, s.c.Federation, "this") // its name has a random part
		if x == "" || strings.ContainsAny(x, " \n\"") {
			return strconv.Quote(x)
		}
		return x
	}
	return fmt.Sprint(v)
}

// momHandle names what an encoded handle designates, by the parameter or
// attribute it came in.
func (s *simulation) momHandle(name string, b []byte) string {
	switch name {
	case "HLAobjectInstance":
		h, err := s.c.Feds[0].DecodeObjectInstanceHandle(b)
		if err != nil {
			return "undecodable"
		}
		return s.obj(h)
	}
	if len(b) != 8 {
		return "undecodable"
	}
	h := binary.BigEndian.Uint64(b)
	switch name {
	case "HLAfederate", "HLAfederateHandle", "HLAfederatesInFederation":
		return s.fed(peer.FederateHandle(h))
	case "HLAobjectClass", "HLAregisteredClass", "HLAknownClass":
		if oc, ok := s.fdd.ObjectClassByHandle(peer.ObjectClassHandle(h)); ok {
			return shortName(oc.QualifiedName)
		}
	case "HLAinteractionClass", "HLAinteractionClassList":
		if ic, ok := s.fdd.InteractionClassByHandle(peer.InteractionClassHandle(h)); ok {
			return shortName(ic.QualifiedName)
		}
	case "HLAattributeList", "HLAownedInstanceAttributeList":
		return s.attrName(peer.AttributeHandle(h))
	}
	return strconv.FormatUint(h, 10)
}
