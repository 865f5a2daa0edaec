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

func getAdvisory(s *Session, which advisory) (bool, error) {
	var on bool
	err := s.with(func(f *peer.Federate) error {
		var err error
		on, err = advisorySwitches[which].get(f)
		return err
	})
	return on, err
}

func setAdvisory(s *Session, which advisory, on bool) error {
	return s.with(func(f *peer.Federate) error {
		a := advisorySwitches[which]
		var err error
		if on {
			if err = a.enable(f); errors.Is(err, a.isOn) {
				err = nil
			}
		} else {
			if err = a.disable(f); errors.Is(err, a.isOff) {
				err = nil
			}
		}
		return err
	})
}

// fixedSwitch answers a switch meshrti does not let change: its value
// (false: meshrti does not do what it turns on).
func fixedSwitch(s *Session) (bool, error) {
	return false, s.with(func(*peer.Federate) error { return nil })
}

// setFixedSwitch accepts value false for the switch named name and
// refuses true.
func setFixedSwitch(s *Session, name string, value bool) error {
	return s.with(func(*peer.Federate) error {
		if value {
			return fmt.Errorf("%w: the %s switch stays off: meshrti does not support turning it on", peer.ErrRTIinternalError, name)
		}
		return nil
	})
}

func pbResignAction(a peer.ResignAction) pb.ResignAction {
	switch a {
	case peer.UnconditionallyDivestAttributes:
		return pb.ResignAction_UNCONDITIONALLY_DIVEST_ATTRIBUTES
	case peer.DeleteObjects:
		return pb.ResignAction_DELETE_OBJECTS
	case peer.CancelPendingOwnershipAcquisitions:
		return pb.ResignAction_CANCEL_PENDING_OWNERSHIP_ACQUISITIONS
	case peer.DeleteObjectsThenDivest:
		return pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST
	case peer.NoAction:
		return pb.ResignAction_NO_ACTION
	}
	return pb.ResignAction_CANCEL_THEN_DELETE_THEN_DIVEST
}

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

func init() {
	// The advisory switches.
	on(func(s *Session, _ *pb.GetObjectClassRelevanceAdvisorySwitchRequest) (*pb.GetObjectClassRelevanceAdvisorySwitchResponse, error) {
		v, err := getAdvisory(s, objectClassRelevance)
		return &pb.GetObjectClassRelevanceAdvisorySwitchResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.SetObjectClassRelevanceAdvisorySwitchRequest) (*pb.SetObjectClassRelevanceAdvisorySwitchResponse, error) {
		return &pb.SetObjectClassRelevanceAdvisorySwitchResponse{}, setAdvisory(s, objectClassRelevance, req.GetValue())
	})
	on(func(s *Session, _ *pb.GetAttributeRelevanceAdvisorySwitchRequest) (*pb.GetAttributeRelevanceAdvisorySwitchResponse, error) {
		v, err := getAdvisory(s, attributeRelevance)
		return &pb.GetAttributeRelevanceAdvisorySwitchResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.SetAttributeRelevanceAdvisorySwitchRequest) (*pb.SetAttributeRelevanceAdvisorySwitchResponse, error) {
		return &pb.SetAttributeRelevanceAdvisorySwitchResponse{}, setAdvisory(s, attributeRelevance, req.GetValue())
	})
	on(func(s *Session, _ *pb.GetAttributeScopeAdvisorySwitchRequest) (*pb.GetAttributeScopeAdvisorySwitchResponse, error) {
		v, err := getAdvisory(s, attributeScope)
		return &pb.GetAttributeScopeAdvisorySwitchResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.SetAttributeScopeAdvisorySwitchRequest) (*pb.SetAttributeScopeAdvisorySwitchResponse, error) {
		return &pb.SetAttributeScopeAdvisorySwitchResponse{}, setAdvisory(s, attributeScope, req.GetValue())
	})
	on(func(s *Session, _ *pb.GetInteractionRelevanceAdvisorySwitchRequest) (*pb.GetInteractionRelevanceAdvisorySwitchResponse, error) {
		v, err := getAdvisory(s, interactionRelevance)
		return &pb.GetInteractionRelevanceAdvisorySwitchResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.SetInteractionRelevanceAdvisorySwitchRequest) (*pb.SetInteractionRelevanceAdvisorySwitchResponse, error) {
		return &pb.SetInteractionRelevanceAdvisorySwitchResponse{}, setAdvisory(s, interactionRelevance, req.GetValue())
	})

	// The convey region designator sets switch is the FDD's; a Set to
	// another value is refused (meshrti does not change it at run time).
	on(func(s *Session, _ *pb.GetConveyRegionDesignatorSetsSwitchRequest) (*pb.GetConveyRegionDesignatorSetsSwitchResponse, error) {
		var v bool
		err := s.with(func(f *peer.Federate) (err error) {
			v, err = f.GetConveyRegionDesignatorSetsSwitch()
			return err
		})
		return &pb.GetConveyRegionDesignatorSetsSwitchResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.SetConveyRegionDesignatorSetsSwitchRequest) (*pb.SetConveyRegionDesignatorSetsSwitchResponse, error) {
		return &pb.SetConveyRegionDesignatorSetsSwitchResponse{}, s.with(func(f *peer.Federate) error {
			v, err := f.GetConveyRegionDesignatorSetsSwitch()
			if err == nil && v != req.GetValue() {
				err = fmt.Errorf("%w: the convey region designator sets switch stays %v, as the FDD sets it: meshrti does not support changing it at run time", peer.ErrRTIinternalError, v)
			}
			return err
		})
	})

	// The switches meshrti keeps off.
	on(func(s *Session, _ *pb.GetServiceReportingSwitchRequest) (*pb.GetServiceReportingSwitchResponse, error) {
		var v bool
		err := s.with(func(f *peer.Federate) (err error) {
			v, err = f.GetServiceReportingSwitch()
			return err
		})
		return &pb.GetServiceReportingSwitchResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.SetServiceReportingSwitchRequest) (*pb.SetServiceReportingSwitchResponse, error) {
		return &pb.SetServiceReportingSwitchResponse{}, s.with(func(f *peer.Federate) error { return f.SetServiceReportingSwitch(req.GetValue()) })
	})
	on(func(s *Session, _ *pb.GetExceptionReportingSwitchRequest) (*pb.GetExceptionReportingSwitchResponse, error) {
		var v bool
		err := s.with(func(f *peer.Federate) (err error) {
			v, err = f.GetExceptionReportingSwitch()
			return err
		})
		return &pb.GetExceptionReportingSwitchResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.SetExceptionReportingSwitchRequest) (*pb.SetExceptionReportingSwitchResponse, error) {
		return &pb.SetExceptionReportingSwitchResponse{}, s.with(func(f *peer.Federate) error { return f.SetExceptionReportingSwitch(req.GetValue()) })
	})
	on(func(s *Session, _ *pb.GetSendServiceReportsToFileSwitchRequest) (*pb.GetSendServiceReportsToFileSwitchResponse, error) {
		v, err := fixedSwitch(s)
		return &pb.GetSendServiceReportsToFileSwitchResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.SetSendServiceReportsToFileSwitchRequest) (*pb.SetSendServiceReportsToFileSwitchResponse, error) {
		return &pb.SetSendServiceReportsToFileSwitchResponse{}, setFixedSwitch(s, "send service reports to file", req.GetValue())
	})
	on(func(s *Session, _ *pb.GetAutoProvideSwitchRequest) (*pb.GetAutoProvideSwitchResponse, error) {
		v, err := fixedSwitch(s)
		return &pb.GetAutoProvideSwitchResponse{Result: v}, err
	})
	on(func(s *Session, _ *pb.GetDelaySubscriptionEvaluationSwitchRequest) (*pb.GetDelaySubscriptionEvaluationSwitchResponse, error) {
		v, err := fixedSwitch(s)
		return &pb.GetDelaySubscriptionEvaluationSwitchResponse{Result: v}, err
	})
	on(func(s *Session, _ *pb.GetAdvisoriesUseKnownClassSwitchRequest) (*pb.GetAdvisoriesUseKnownClassSwitchResponse, error) {
		v, err := fixedSwitch(s)
		return &pb.GetAdvisoriesUseKnownClassSwitchResponse{Result: v}, err
	})
	on(func(s *Session, _ *pb.GetAllowRelaxedDDMSwitchRequest) (*pb.GetAllowRelaxedDDMSwitchResponse, error) {
		v, err := fixedSwitch(s)
		return &pb.GetAllowRelaxedDDMSwitchResponse{Result: v}, err
	})
	on(func(s *Session, _ *pb.GetNonRegulatedGrantSwitchRequest) (*pb.GetNonRegulatedGrantSwitchResponse, error) {
		v, err := fixedSwitch(s)
		return &pb.GetNonRegulatedGrantSwitchResponse{Result: v}, err
	})

	// §10.2-§10.3 The automatic resign directive.
	on(func(s *Session, _ *pb.GetAutomaticResignDirectiveRequest) (*pb.GetAutomaticResignDirectiveResponse, error) {
		var a peer.ResignAction
		err := s.with(func(f *peer.Federate) (err error) {
			a, err = f.GetAutomaticResignDirective()
			return err
		})
		return &pb.GetAutomaticResignDirectiveResponse{Result: pbResignAction(a)}, err
	})
	on(func(s *Session, req *pb.SetAutomaticResignDirectiveRequest) (*pb.SetAutomaticResignDirectiveResponse, error) {
		return &pb.SetAutomaticResignDirectiveResponse{}, s.with(func(f *peer.Federate) error {
			a, err := resignAction(req.GetValue())
			if err != nil {
				return err
			}
			return f.SetAutomaticResignDirective(a)
		})
	})

	// §10.31-§10.32 and HLA 4's normalization services: the values the
	// handles have on the MOM's dimensions.
	on(func(s *Session, req *pb.NormalizeServiceGroupRequest) (*pb.NormalizeServiceGroupResponse, error) {
		var v uint32
		err := s.with(func(f *peer.Federate) error {
			n, err := f.NormalizeServiceGroup(peer.ServiceGroup(req.GetServiceGroup()))
			if err != nil {
				return err
			}
			v, err = uint32Of(n, "the normalized service group")
			return err
		})
		return &pb.NormalizeServiceGroupResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.NormalizeFederateHandleRequest) (*pb.NormalizeFederateHandleResponse, error) {
		var v uint32
		err := s.with(func(f *peer.Federate) error {
			h, err := fedHandle(req.GetFederate())
			if err != nil {
				return err
			}
			n, err := f.NormalizeFederateHandle(h)
			if err != nil {
				return err
			}
			v, err = uint32Of(n, "the normalized federate handle")
			return err
		})
		return &pb.NormalizeFederateHandleResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.NormalizeObjectClassHandleRequest) (*pb.NormalizeObjectClassHandleResponse, error) {
		var v uint32
		err := s.with(func(f *peer.Federate) error {
			class, err := classHandle(req.GetObjectClass())
			if err != nil {
				return err
			}
			if _, err := f.GetObjectClassName(class); err != nil {
				return err
			}
			v = uint32(class)
			return nil
		})
		return &pb.NormalizeObjectClassHandleResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.NormalizeInteractionClassHandleRequest) (*pb.NormalizeInteractionClassHandleResponse, error) {
		var v uint32
		err := s.with(func(f *peer.Federate) error {
			ic, err := interactionHandle(req.GetInteractionClass())
			if err != nil {
				return err
			}
			if _, err := f.GetInteractionClassName(ic); err != nil {
				return err
			}
			v = uint32(ic)
			return nil
		})
		return &pb.NormalizeInteractionClassHandleResponse{Result: v}, err
	})
	on(func(s *Session, req *pb.NormalizeObjectInstanceHandleRequest) (*pb.NormalizeObjectInstanceHandleResponse, error) {
		var v uint32
		err := s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			if _, err := f.GetKnownObjectClassHandle(obj); err != nil {
				return err
			}
			v = normalizeObjectInstance(obj)
			return nil
		})
		return &pb.NormalizeObjectInstanceHandleResponse{Result: v}, err
	})
}
