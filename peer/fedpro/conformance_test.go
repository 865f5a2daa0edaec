package fedpro

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Through the protocol, the producing federate of a discover, reflect,
// receive and remove is there only while the FDD's
// HLAconveyProducingFederate switch is on (1516.1 §6.9): the public
// clients pick the 3- or 4-argument discover, and fill the supplemental
// infos, by whether the field is present. No sent regions are conveyed
// either way; Get Convey Region Designator Sets Switch answers the FDD's
// setting, and a Set to that value succeeds, to the other is refused.
func TestConformanceProducingFederate(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("switch %v", on), func(t *testing.T) {
			fom := mtFOM
			if on {
				fom = strings.Replace(fom, "</objectModel>",
					`<switches><conveyRegionDesignatorSets isEnabled="true"/><conveyProducingFederate isEnabled="true"/></switches></objectModel>`, 1)
			}
			m := mtNewFederationFOM(t, fom)
			a, b := m.join("A"), m.join("B")
			h := mtHandlesOf(a)

			sw := b.ok(&pb.GetConveyRegionDesignatorSetsSwitchRequest{}).(*pb.GetConveyRegionDesignatorSetsSwitchResponse)
			if sw.GetResult() != on {
				t.Errorf("convey region designator sets switch reads %v, want %v", sw.GetResult(), on)
			}
			b.ok(&pb.SetConveyRegionDesignatorSetsSwitchRequest{Value: on})
			b.fails("set the convey region designator sets switch to the other value", &pb.SetConveyRegionDesignatorSetsSwitchRequest{Value: !on}, "RTIinternalError")

			b.ok(&pb.SubscribeObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.name)})
			b.ok(&pb.SubscribeInteractionClassRequest{InteractionClass: pbInteraction(h.horn)})
			a.ok(&pb.PublishObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.name)})
			a.ok(&pb.PublishInteractionClassRequest{InteractionClass: pbInteraction(h.horn)})
			obj := a.ok(&pb.RegisterObjectInstanceRequest{ObjectClass: pbClass(h.ship)}).(*pb.RegisterObjectInstanceResponse).GetResult()

			check := func(what string, got *pb.FederateHandle) {
				t.Helper()
				switch {
				case !on && got != nil:
					t.Errorf("%s: producing federate %x conveyed while the switch is off", what, got.GetData())
				case on && !bytes.Equal(got.GetData(), a.handle.GetData()):
					t.Errorf("%s: producing federate %v, want A's %x", what, got, a.handle.GetData())
				}
			}
			d := mtWaitFor(b, func(d *pb.DiscoverObjectInstance) bool { return mtSameObj(d.GetObjectInstance(), obj) })
			check("discover", d.ProducingFederate)

			a.ok(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: pbAttrValues(peer.AttributeValues{h.name: []byte("n")}), UserSuppliedTag: []byte("u")})
			r := mtWaitFor(b, func(r *pb.ReflectAttributeValues) bool { return mtSameObj(r.GetObjectInstance(), obj) })
			check("reflect", r.ProducingFederate)
			if r.OptionalSentRegions != nil {
				t.Errorf("reflect: sent regions %v conveyed", r.OptionalSentRegions)
			}

			a.ok(&pb.SendInteractionRequest{InteractionClass: pbInteraction(h.horn), ParameterValues: pbParamValues(peer.ParameterValues{h.volume: []byte("v")}), UserSuppliedTag: []byte("i")})
			i := mtWaitFor(b, func(i *pb.ReceiveInteraction) bool { return string(i.GetUserSuppliedTag()) == "i" })
			check("receive", i.ProducingFederate)
			if i.OptionalSentRegions != nil {
				t.Errorf("receive: sent regions %v conveyed", i.OptionalSentRegions)
			}

			a.ok(&pb.DeleteObjectInstanceRequest{ObjectInstance: obj, UserSuppliedTag: []byte("d")})
			rm := mtWaitFor(b, func(rm *pb.RemoveObjectInstance) bool { return mtSameObj(rm.GetObjectInstance(), obj) })
			check("remove", rm.ProducingFederate)
		})
	}
}
