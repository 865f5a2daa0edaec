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
	return decodeBoth(o, objHandle, as, attrSet)
}

// withObjAttrs decodes an instance and an attribute set and calls fn
// with them.
func withObjAttrs(o *pb.ObjectInstanceHandle, as *pb.AttributeHandleSet, fn func(peer.ObjectInstanceHandle, ...peer.AttributeHandle) error) error {
	obj, attrs, err := objAttrs(o, as)
	if err != nil {
		return err
	}
	return fn(obj, attrs...)
}

// withObjTagAttrs is withObjAttrs for a service that takes a tag.
func withObjTagAttrs(o *pb.ObjectInstanceHandle, tag []byte, as *pb.AttributeHandleSet, fn func(peer.ObjectInstanceHandle, []byte, ...peer.AttributeHandle) error) error {
	return withObjAttrs(o, as, func(obj peer.ObjectInstanceHandle, attrs ...peer.AttributeHandle) error {
		return fn(obj, tag, attrs...)
	})
}

// ownershipCalls adds the ownership management calls (1516.1 §7) to t.
func ownershipCalls(t callTable) {
	act(t, func(f *peer.Federate, req *pb.UnconditionalAttributeOwnershipDivestitureRequest) error {
		return withObjAttrs(req.GetObjectInstance(), req.GetAttributes(), f.UnconditionalAttributeOwnershipDivestiture)
	})
	act(t, func(f *peer.Federate, req *pb.NegotiatedAttributeOwnershipDivestitureRequest) error {
		return withObjTagAttrs(req.GetObjectInstance(), req.GetUserSuppliedTag(), req.GetAttributes(), f.NegotiatedAttributeOwnershipDivestiture)
	})
	act(t, func(f *peer.Federate, req *pb.ConfirmDivestitureRequest) error {
		return withObjTagAttrs(req.GetObjectInstance(), req.GetUserSuppliedTag(), req.GetConfirmedAttributes(), f.ConfirmDivestiture)
	})
	act(t, func(f *peer.Federate, req *pb.AttributeOwnershipAcquisitionRequest) error {
		return withObjTagAttrs(req.GetObjectInstance(), req.GetUserSuppliedTag(), req.GetDesiredAttributes(), f.AttributeOwnershipAcquisition)
	})
	act(t, func(f *peer.Federate, req *pb.AttributeOwnershipAcquisitionIfAvailableRequest) error {
		return withObjAttrs(req.GetObjectInstance(), req.GetDesiredAttributes(), f.AttributeOwnershipAcquisitionIfAvailable)
	})
	act(t, func(f *peer.Federate, req *pb.AttributeOwnershipReleaseDeniedRequest) error {
		return withObjAttrs(req.GetObjectInstance(), req.GetAttributes(), f.AttributeOwnershipReleaseDenied)
	})
	ask(t, func(f *peer.Federate, req *pb.AttributeOwnershipDivestitureIfWantedRequest) (*pb.AttributeHandleSet, error) {
		obj, attrs, err := objAttrs(req.GetObjectInstance(), req.GetAttributes())
		if err != nil {
			return nil, err
		}
		divested, err := f.AttributeOwnershipDivestitureIfWanted(obj, attrs...)
		return pbAttrSet(divested), err
	})
	act(t, func(f *peer.Federate, req *pb.CancelNegotiatedAttributeOwnershipDivestitureRequest) error {
		return withObjAttrs(req.GetObjectInstance(), req.GetAttributes(), f.CancelNegotiatedAttributeOwnershipDivestiture)
	})
	act(t, func(f *peer.Federate, req *pb.CancelAttributeOwnershipAcquisitionRequest) error {
		return withObjAttrs(req.GetObjectInstance(), req.GetAttributes(), f.CancelAttributeOwnershipAcquisition)
	})
	// HLA 4 queries a set of attributes: one query (and one answering
	// callback) per attribute, all of them checked before any is asked.
	act(t, func(f *peer.Federate, req *pb.QueryAttributeOwnershipRequest) error {
		return withObjAttrs(req.GetObjectInstance(), req.GetAttributes(), func(obj peer.ObjectInstanceHandle, attrs ...peer.AttributeHandle) error {
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
	ask(t, func(f *peer.Federate, req *pb.IsAttributeOwnedByFederateRequest) (bool, error) {
		obj, a, err := objAttr(req.GetObjectInstance(), req.GetAttribute())
		if err != nil {
			return false, err
		}
		return f.IsAttributeOwnedByFederate(obj, a)
	})
}
