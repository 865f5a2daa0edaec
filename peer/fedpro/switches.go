package fedpro

import (
	"errors"
	"fmt"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Switches and normalization (1516.1 §10.2-§10.3, §10.31-§10.40, and
// HLA 4's Get/Set switch services).
//
// The four advisory switches map onto peer's Enable/Disable services. The
// protocol's Set is idempotent: setting a switch to the value it has
// succeeds (peer's "switch is on/off" error is dropped, nothing else
// is); Get reads peer's getters. The service and exception reporting
// switches are the MOM's (docs/mom.md).
//
// The convey region designator sets switch reads the FDD's setting
// (meshrti conveys no sent regions either way); a Set to another value
// is refused. The other switches answer meshrti's fixed behaviour: it
// writes no service report file, does not provide
// values automatically, evaluates subscriptions at once, bases its
// advisories on the registered class, checks region contexts strictly
// and grants no time advances by the non-regulated rule: all false. A Set
// to that value succeeds; a Set to the other is refused with
// RTIinternalError saying meshrti does not support it.

// advisory is one advisory switch.
type advisory int

const (
	objectClassRelevance advisory = iota
	attributeRelevance
	attributeScope
	interactionRelevance
	advisories
)

// advisorySwitch is how one advisory switch is read and set.
type advisorySwitch struct {
	get         func(*peer.Federate) (bool, error)
	enable      func(*peer.Federate) error
	disable     func(*peer.Federate) error
	isOn, isOff error
}

var advisorySwitches = [advisories]advisorySwitch{
	objectClassRelevance: {(*peer.Federate).GetObjectClassRelevanceAdvisorySwitch,
		(*peer.Federate).EnableObjectClassRelevanceAdvisorySwitch, (*peer.Federate).DisableObjectClassRelevanceAdvisorySwitch,
		peer.ErrObjectClassRelevanceAdvisorySwitchIsOn, peer.ErrObjectClassRelevanceAdvisorySwitchIsOff},
	attributeRelevance: {(*peer.Federate).GetAttributeRelevanceAdvisorySwitch,
		(*peer.Federate).EnableAttributeRelevanceAdvisorySwitch, (*peer.Federate).DisableAttributeRelevanceAdvisorySwitch,
		peer.ErrAttributeRelevanceAdvisorySwitchIsOn, peer.ErrAttributeRelevanceAdvisorySwitchIsOff},
	attributeScope: {(*peer.Federate).GetAttributeScopeAdvisorySwitch,
		(*peer.Federate).EnableAttributeScopeAdvisorySwitch, (*peer.Federate).DisableAttributeScopeAdvisorySwitch,
		peer.ErrAttributeScopeAdvisorySwitchIsOn, peer.ErrAttributeScopeAdvisorySwitchIsOff},
	interactionRelevance: {(*peer.Federate).GetInteractionRelevanceAdvisorySwitch,
		(*peer.Federate).EnableInteractionRelevanceAdvisorySwitch, (*peer.Federate).DisableInteractionRelevanceAdvisorySwitch,
		peer.ErrInteractionRelevanceAdvisorySwitchIsOn, peer.ErrInteractionRelevanceAdvisorySwitchIsOff},
}

// set sets the switch to on; setting it to the value it has succeeds.
func (a advisorySwitch) set(f *peer.Federate, on bool) error {
	if on {
		if err := a.enable(f); !errors.Is(err, a.isOn) {
			return err
		}
		return nil
	}
	if err := a.disable(f); !errors.Is(err, a.isOff) {
		return err
	}
	return nil
}

// setFixedSwitch accepts value false for the switch named name and
// refuses true.
func setFixedSwitch(name string, value bool) error {
	if value {
		return fmt.Errorf("%w: the %s switch stays off: meshrti does not support turning it on", peer.ErrRTIinternalError, name)
	}
	return nil
}

// fixedSwitch answers a switch meshrti does not let change: its value
// (false: meshrti does not do what it turns on).
func fixedSwitch(*peer.Federate) (bool, error) { return false, nil }

// Normalize Object Class Handle and Normalize Interaction Class Handle
// answer the low 32 bits of the class handle: meshrti's class handles
// are 64-bit digests of the class's name, the same in every federate,
// so the low bits are as stable, and distinct for all but a 2^-32
// chance per pair of classes.

// normalizeObjectInstance is the Normalize Object Instance Handle value
// of h: meshrti's instance handles are a federate handle and a serial
// number of that federate's, 128 bits; the value is the federate's low
// 12 bits then the serial's low 20, unique while the federation's
// federate handles stay below 4096 and each federate registers fewer
// than 1,048,576 instances.
func normalizeObjectInstance(h peer.ObjectInstanceHandle) uint32 {
	return uint32(h.Federate&0xfff)<<20 | uint32(h.Serial&0xfffff)
}

// normalized checks that the handle decoded and names something (known
// answers its error), then answers the handle's normalized value.
func normalized[H any](h H, err error, known func(H) error, norm func(H) uint32) (uint32, error) {
	if err != nil {
		return 0, err
	}
	if err := known(h); err != nil {
		return 0, err
	}
	return norm(h), nil
}

// switchCalls adds the switch and normalization calls (1516.1 §10) to t.
func switchCalls(t callTable) {
	// The advisory switches.
	sw := advisorySwitches
	ask(t, func(f *peer.Federate, _ *pb.GetObjectClassRelevanceAdvisorySwitchRequest) (bool, error) {
		return sw[objectClassRelevance].get(f)
	})
	act(t, func(f *peer.Federate, req *pb.SetObjectClassRelevanceAdvisorySwitchRequest) error {
		return sw[objectClassRelevance].set(f, req.GetValue())
	})
	ask(t, func(f *peer.Federate, _ *pb.GetAttributeRelevanceAdvisorySwitchRequest) (bool, error) {
		return sw[attributeRelevance].get(f)
	})
	act(t, func(f *peer.Federate, req *pb.SetAttributeRelevanceAdvisorySwitchRequest) error {
		return sw[attributeRelevance].set(f, req.GetValue())
	})
	ask(t, func(f *peer.Federate, _ *pb.GetAttributeScopeAdvisorySwitchRequest) (bool, error) {
		return sw[attributeScope].get(f)
	})
	act(t, func(f *peer.Federate, req *pb.SetAttributeScopeAdvisorySwitchRequest) error {
		return sw[attributeScope].set(f, req.GetValue())
	})
	ask(t, func(f *peer.Federate, _ *pb.GetInteractionRelevanceAdvisorySwitchRequest) (bool, error) {
		return sw[interactionRelevance].get(f)
	})
	act(t, func(f *peer.Federate, req *pb.SetInteractionRelevanceAdvisorySwitchRequest) error {
		return sw[interactionRelevance].set(f, req.GetValue())
	})

	// The convey region designator sets switch is the FDD's; a Set to
	// another value is refused (meshrti does not change it at run time).
	ask(t, func(f *peer.Federate, _ *pb.GetConveyRegionDesignatorSetsSwitchRequest) (bool, error) {
		return f.GetConveyRegionDesignatorSetsSwitch()
	})
	act(t, func(f *peer.Federate, req *pb.SetConveyRegionDesignatorSetsSwitchRequest) error {
		v, err := f.GetConveyRegionDesignatorSetsSwitch()
		if err == nil && v != req.GetValue() {
			err = fmt.Errorf("%w: the convey region designator sets switch stays %v, as the FDD sets it: meshrti does not support changing it at run time", peer.ErrRTIinternalError, v)
		}
		return err
	})

	// The switches meshrti keeps off.
	ask(t, func(f *peer.Federate, _ *pb.GetServiceReportingSwitchRequest) (bool, error) {
		return f.GetServiceReportingSwitch()
	})
	act(t, func(f *peer.Federate, req *pb.SetServiceReportingSwitchRequest) error {
		return f.SetServiceReportingSwitch(req.GetValue())
	})
	ask(t, func(f *peer.Federate, _ *pb.GetExceptionReportingSwitchRequest) (bool, error) {
		return f.GetExceptionReportingSwitch()
	})
	act(t, func(f *peer.Federate, req *pb.SetExceptionReportingSwitchRequest) error {
		return f.SetExceptionReportingSwitch(req.GetValue())
	})
	ask(t, func(f *peer.Federate, _ *pb.GetSendServiceReportsToFileSwitchRequest) (bool, error) {
		return fixedSwitch(f)
	})
	act(t, func(_ *peer.Federate, req *pb.SetSendServiceReportsToFileSwitchRequest) error {
		return setFixedSwitch("send service reports to file", req.GetValue())
	})
	ask(t, func(f *peer.Federate, _ *pb.GetAutoProvideSwitchRequest) (bool, error) { return fixedSwitch(f) })
	ask(t, func(f *peer.Federate, _ *pb.GetDelaySubscriptionEvaluationSwitchRequest) (bool, error) {
		return fixedSwitch(f)
	})
	ask(t, func(f *peer.Federate, _ *pb.GetAdvisoriesUseKnownClassSwitchRequest) (bool, error) {
		return fixedSwitch(f)
	})
	ask(t, func(f *peer.Federate, _ *pb.GetAllowRelaxedDDMSwitchRequest) (bool, error) { return fixedSwitch(f) })
	ask(t, func(f *peer.Federate, _ *pb.GetNonRegulatedGrantSwitchRequest) (bool, error) { return fixedSwitch(f) })

	// §10.2-§10.3 The automatic resign directive.
	ask(t, func(f *peer.Federate, _ *pb.GetAutomaticResignDirectiveRequest) (pb.ResignAction, error) {
		return encode(pbResignAction)(f.GetAutomaticResignDirective())
	})
	act(t, func(f *peer.Federate, req *pb.SetAutomaticResignDirectiveRequest) error {
		return do(f.SetAutomaticResignDirective)(resignAction(req.GetValue()))
	})

	// §10.31-§10.32 and HLA 4's normalization services: the values the
	// handles have on the MOM's dimensions.
	ask(t, func(f *peer.Federate, req *pb.NormalizeServiceGroupRequest) (uint32, error) {
		return fits32("the normalized service group")(f.NormalizeServiceGroup(peer.ServiceGroup(req.GetServiceGroup())))
	})
	ask(t, func(f *peer.Federate, req *pb.NormalizeFederateHandleRequest) (uint32, error) {
		return fits32("the normalized federate handle")(then(f.NormalizeFederateHandle)(fedHandle(req.GetFederate())))
	})
	ask(t, func(f *peer.Federate, req *pb.NormalizeObjectClassHandleRequest) (uint32, error) {
		class, err := classHandle(req.GetObjectClass())
		return normalized(class, err, func(c peer.ObjectClassHandle) error { _, err := f.GetObjectClassName(c); return err },
			func(c peer.ObjectClassHandle) uint32 { return uint32(c) })
	})
	ask(t, func(f *peer.Federate, req *pb.NormalizeInteractionClassHandleRequest) (uint32, error) {
		ic, err := interactionHandle(req.GetInteractionClass())
		return normalized(ic, err, func(ic peer.InteractionClassHandle) error { _, err := f.GetInteractionClassName(ic); return err },
			func(ic peer.InteractionClassHandle) uint32 { return uint32(ic) })
	})
	ask(t, func(f *peer.Federate, req *pb.NormalizeObjectInstanceHandleRequest) (uint32, error) {
		obj, err := objHandle(req.GetObjectInstance())
		return normalized(obj, err, func(o peer.ObjectInstanceHandle) error { _, err := f.GetKnownObjectClassHandle(o); return err },
			normalizeObjectInstance)
	})
}
