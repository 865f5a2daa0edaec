package fedpro

import (
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Ownership management (1516.1 §7).
//
// The user-supplied tags of Unconditional Attribute Ownership
// Divestiture, Attribute Ownership Acquisition If Available, Attribute
// Ownership Release Denied and Attribute Ownership Divestiture If Wanted
// are accepted and dropped: meshrti's services take none (no callback
// carries them).

// objAttrs decodes an instance and an attribute set.
func objAttrs(o *pb.ObjectInstanceHandle, as *pb.AttributeHandleSet) (peer.ObjectInstanceHandle, []peer.AttributeHandle, error) {
	obj, err := objHandle(o)
	if err != nil {
		return obj, nil, err
	}
	attrs, err := attrSet(as)
	return obj, attrs, err
}

// withObjAttrs runs fn on the session's federate with the decoded
// instance and attribute set.
func withObjAttrs(s *Session, o *pb.ObjectInstanceHandle, as *pb.AttributeHandleSet, fn func(*peer.Federate, peer.ObjectInstanceHandle, []peer.AttributeHandle) error) error {
	return s.with(func(f *peer.Federate) error {
		obj, attrs, err := objAttrs(o, as)
		if err != nil {
			return err
		}
		return fn(f, obj, attrs)
	})
}

func init() {
	on(func(s *Session, req *pb.UnconditionalAttributeOwnershipDivestitureRequest) (*pb.UnconditionalAttributeOwnershipDivestitureResponse, error) {
		return &pb.UnconditionalAttributeOwnershipDivestitureResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				return f.UnconditionalAttributeOwnershipDivestiture(obj, attrs...)
			})
	})
	on(func(s *Session, req *pb.NegotiatedAttributeOwnershipDivestitureRequest) (*pb.NegotiatedAttributeOwnershipDivestitureResponse, error) {
		return &pb.NegotiatedAttributeOwnershipDivestitureResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				return f.NegotiatedAttributeOwnershipDivestiture(obj, req.GetUserSuppliedTag(), attrs...)
			})
	})
	on(func(s *Session, req *pb.ConfirmDivestitureRequest) (*pb.ConfirmDivestitureResponse, error) {
		return &pb.ConfirmDivestitureResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetConfirmedAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				return f.ConfirmDivestiture(obj, req.GetUserSuppliedTag(), attrs...)
			})
	})
	on(func(s *Session, req *pb.AttributeOwnershipAcquisitionRequest) (*pb.AttributeOwnershipAcquisitionResponse, error) {
		return &pb.AttributeOwnershipAcquisitionResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetDesiredAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				return f.AttributeOwnershipAcquisition(obj, req.GetUserSuppliedTag(), attrs...)
			})
	})
	on(func(s *Session, req *pb.AttributeOwnershipAcquisitionIfAvailableRequest) (*pb.AttributeOwnershipAcquisitionIfAvailableResponse, error) {
		return &pb.AttributeOwnershipAcquisitionIfAvailableResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetDesiredAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				return f.AttributeOwnershipAcquisitionIfAvailable(obj, attrs...)
			})
	})
	on(func(s *Session, req *pb.AttributeOwnershipReleaseDeniedRequest) (*pb.AttributeOwnershipReleaseDeniedResponse, error) {
		return &pb.AttributeOwnershipReleaseDeniedResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				return f.AttributeOwnershipReleaseDenied(obj, attrs...)
			})
	})
	on(func(s *Session, req *pb.AttributeOwnershipDivestitureIfWantedRequest) (*pb.AttributeOwnershipDivestitureIfWantedResponse, error) {
		var divested []peer.AttributeHandle
		err := withObjAttrs(s, req.GetObjectInstance(), req.GetAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) (err error) {
				divested, err = f.AttributeOwnershipDivestitureIfWanted(obj, attrs...)
				return err
			})
		return &pb.AttributeOwnershipDivestitureIfWantedResponse{Result: pbAttrSet(divested)}, err
	})
	on(func(s *Session, req *pb.CancelNegotiatedAttributeOwnershipDivestitureRequest) (*pb.CancelNegotiatedAttributeOwnershipDivestitureResponse, error) {
		return &pb.CancelNegotiatedAttributeOwnershipDivestitureResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				return f.CancelNegotiatedAttributeOwnershipDivestiture(obj, attrs...)
			})
	})
	on(func(s *Session, req *pb.CancelAttributeOwnershipAcquisitionRequest) (*pb.CancelAttributeOwnershipAcquisitionResponse, error) {
		return &pb.CancelAttributeOwnershipAcquisitionResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				return f.CancelAttributeOwnershipAcquisition(obj, attrs...)
			})
	})
	// HLA 4 queries a set of attributes: one query (and one answering
	// callback) per attribute, all of them checked before any is asked.
	on(func(s *Session, req *pb.QueryAttributeOwnershipRequest) (*pb.QueryAttributeOwnershipResponse, error) {
		return &pb.QueryAttributeOwnershipResponse{}, withObjAttrs(s, req.GetObjectInstance(), req.GetAttributes(),
			func(f *peer.Federate, obj peer.ObjectInstanceHandle, attrs []peer.AttributeHandle) error {
				for _, a := range attrs {
					if _, err := f.IsAttributeOwnedByFederate(obj, a); err != nil {
						return err
					}
				}
				for _, a := range attrs {
					if err := f.QueryAttributeOwnership(obj, a); err != nil {
						return err
					}
				}
				return nil
			})
	})
	on(func(s *Session, req *pb.IsAttributeOwnedByFederateRequest) (*pb.IsAttributeOwnedByFederateResponse, error) {
		var owned bool
		err := s.with(func(f *peer.Federate) error {
			obj, err := objHandle(req.GetObjectInstance())
			if err != nil {
				return err
			}
			a, err := attrHandle(req.GetAttribute())
			if err != nil {
				return err
			}
			owned, err = f.IsAttributeOwnedByFederate(obj, a)
			return err
		})
		return &pb.IsAttributeOwnedByFederateResponse{Result: owned}, err
	})
}
