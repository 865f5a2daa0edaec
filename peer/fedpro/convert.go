package fedpro

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/hla"
)

// Handles travel as the RTI encodes them (hla.EncodeHandle and the
// Encode methods); a handle that does not decode is the call's invalid
// handle exception.

func decodeHandle[H ~uint64](b []byte, invalid error) (H, error) {
	h, err := hla.DecodeHandle[H](b)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", invalid, err)
	}
	return h, nil
}

func fedHandle(h *pb.FederateHandle) (peer.FederateHandle, error) {
	return decodeHandle[peer.FederateHandle](h.GetData(), peer.ErrInvalidFederateHandle)
}

func classHandle(h *pb.ObjectClassHandle) (peer.ObjectClassHandle, error) {
	return decodeHandle[peer.ObjectClassHandle](h.GetData(), peer.ErrInvalidObjectClassHandle)
}

func interactionHandle(h *pb.InteractionClassHandle) (peer.InteractionClassHandle, error) {
	return decodeHandle[peer.InteractionClassHandle](h.GetData(), peer.ErrInvalidInteractionClassHandle)
}

func attrHandle(h *pb.AttributeHandle) (peer.AttributeHandle, error) {
	return decodeHandle[peer.AttributeHandle](h.GetData(), peer.ErrInvalidAttributeHandle)
}

func paramHandle(h *pb.ParameterHandle) (peer.ParameterHandle, error) {
	return decodeHandle[peer.ParameterHandle](h.GetData(), peer.ErrInvalidParameterHandle)
}

func dimHandle(h *pb.DimensionHandle) (peer.DimensionHandle, error) {
	return decodeHandle[peer.DimensionHandle](h.GetData(), peer.ErrInvalidDimensionHandle)
}

func objHandle(h *pb.ObjectInstanceHandle) (peer.ObjectInstanceHandle, error) {
	o, err := hla.DecodeObjectInstanceHandle(h.GetData())
	if err != nil {
		return o, fmt.Errorf("%w: %w", peer.ErrObjectInstanceNotKnown, err)
	}
	return o, nil
}

func regionHandle(h *pb.RegionHandle) (peer.RegionHandle, error) {
	r, err := hla.DecodeRegionHandle(h.GetData())
	if err != nil {
		return r, fmt.Errorf("%w: %w", peer.ErrInvalidRegion, err)
	}
	return r, nil
}

func retractionHandle(h *pb.MessageRetractionHandle) (peer.MessageRetractionHandle, error) {
	r, err := hla.DecodeMessageRetractionHandle(h.GetData())
	if err != nil {
		return r, fmt.Errorf("%w: %w", peer.ErrInvalidMessageRetractionHandle, err)
	}
	return r, nil
}

func pbFed(h peer.FederateHandle) *pb.FederateHandle {
	return &pb.FederateHandle{Data: hla.EncodeHandle(h)}
}

func pbClass(h peer.ObjectClassHandle) *pb.ObjectClassHandle {
	return &pb.ObjectClassHandle{Data: hla.EncodeHandle(h)}
}

func pbInteraction(h peer.InteractionClassHandle) *pb.InteractionClassHandle {
	return &pb.InteractionClassHandle{Data: hla.EncodeHandle(h)}
}

func pbAttr(h peer.AttributeHandle) *pb.AttributeHandle {
	return &pb.AttributeHandle{Data: hla.EncodeHandle(h)}
}

func pbParam(h peer.ParameterHandle) *pb.ParameterHandle {
	return &pb.ParameterHandle{Data: hla.EncodeHandle(h)}
}

func pbDim(h peer.DimensionHandle) *pb.DimensionHandle {
	return &pb.DimensionHandle{Data: hla.EncodeHandle(h)}
}

func pbObj(h peer.ObjectInstanceHandle) *pb.ObjectInstanceHandle {
	return &pb.ObjectInstanceHandle{Data: h.Encode()}
}

func pbRegion(h peer.RegionHandle) *pb.RegionHandle { return &pb.RegionHandle{Data: h.Encode()} }

func pbRetraction(h peer.MessageRetractionHandle) *pb.MessageRetractionHandle {
	return &pb.MessageRetractionHandle{Data: h.Encode()}
}

func attrSet(s *pb.AttributeHandleSet) ([]peer.AttributeHandle, error) {
	return decodeAll(s.GetAttributeHandle(), attrHandle)
}

func pbAttrSet(hs []peer.AttributeHandle) *pb.AttributeHandleSet {
	return &pb.AttributeHandleSet{AttributeHandle: encodeAll(hs, pbAttr)}
}

func fedSet(s *pb.FederateHandleSet) ([]peer.FederateHandle, error) {
	return decodeAll(s.GetFederateHandle(), fedHandle)
}

func pbFedSet(hs []peer.FederateHandle) *pb.FederateHandleSet {
	return &pb.FederateHandleSet{FederateHandle: encodeAll(hs, pbFed)}
}

// decodeBoth decodes p with decodeP and q with decodeQ, failing at the
// first that does not decode.
func decodeBoth[P, Q, A, B any](p P, decodeP func(P) (A, error), q Q, decodeQ func(Q) (B, error)) (A, B, error) {
	a, err := decodeP(p)
	if err != nil {
		var b B
		return a, b, err
	}
	b, err := decodeQ(q)
	return a, b, err
}

// decodeAll decodes each of a set's handles with decode, failing at the
// first that does not decode.
func decodeAll[P, H any](in []P, decode func(P) (H, error)) ([]H, error) {
	out := make([]H, 0, len(in))
	for _, p := range in {
		h, err := decode(p)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// encodeAll encodes each handle of hs with encode (nil for none).
func encodeAll[H, P any](hs []H, encode func(H) P) []P {
	var out []P
	for _, h := range hs {
		out = append(out, encode(h))
	}
	return out
}

func attrValues(m *pb.AttributeHandleValueMap) (peer.AttributeValues, error) {
	return decodeValues(m.GetAttributeHandleValue(), func(v *pb.AttributeHandleValue) (peer.AttributeHandle, []byte, error) {
		a, err := attrHandle(v.GetAttributeHandle())
		return a, v.GetValue(), err
	})
}

func pbAttrValues(vs peer.AttributeValues) *pb.AttributeHandleValueMap {
	return &pb.AttributeHandleValueMap{AttributeHandleValue: encodeValues(vs, func(a peer.AttributeHandle, v []byte) *pb.AttributeHandleValue {
		return &pb.AttributeHandleValue{AttributeHandle: pbAttr(a), Value: v}
	})}
}

func paramValues(m *pb.ParameterHandleValueMap) (peer.ParameterValues, error) {
	return decodeValues(m.GetParameterHandleValue(), func(v *pb.ParameterHandleValue) (peer.ParameterHandle, []byte, error) {
		p, err := paramHandle(v.GetParameterHandle())
		return p, v.GetValue(), err
	})
}

func pbParamValues(vs peer.ParameterValues) *pb.ParameterHandleValueMap {
	return &pb.ParameterHandleValueMap{ParameterHandleValue: encodeValues(vs, func(p peer.ParameterHandle, v []byte) *pb.ParameterHandleValue {
		return &pb.ParameterHandleValue{ParameterHandle: pbParam(p), Value: v}
	})}
}

// decodeValues decodes a handle-value map's entries with decode, failing
// at the first whose handle does not decode.
func decodeValues[E any, H comparable](in []E, decode func(E) (H, []byte, error)) (map[H][]byte, error) {
	out := make(map[H][]byte, len(in))
	for _, e := range in {
		h, v, err := decode(e)
		if err != nil {
			return nil, err
		}
		out[h] = v
	}
	return out, nil
}

// encodeValues makes a handle-value map's entries with entry (nil for none).
func encodeValues[M ~map[H][]byte, H comparable, E any](vs M, entry func(H, []byte) E) []E {
	var out []E
	for h, v := range vs {
		out = append(out, entry(h, v))
	}
	return out
}

// logicalTime decodes a logical time (or interval) of f's representation.
func logicalTime(f *peer.Federate, data []byte) (peer.LogicalTime, error) {
	t, err := f.GetTimeFactory().Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", peer.ErrInvalidLogicalTime, err)
	}
	return t, nil
}

func lookahead(f *peer.Federate, data []byte) (peer.LogicalTime, error) {
	t, err := f.GetTimeFactory().Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", peer.ErrInvalidLookahead, err)
	}
	return t, nil
}

func pbTime(f *peer.Federate, t peer.LogicalTime) *pb.LogicalTime {
	b, _ := f.GetTimeFactory().Encode(t) // the RTI's own times encode
	return &pb.LogicalTime{Data: b}
}

func pbInterval(f *peer.Federate, t peer.LogicalTime) *pb.LogicalTimeInterval {
	b, _ := f.GetTimeFactory().Encode(t)
	return &pb.LogicalTimeInterval{Data: b}
}

func pbOrder(o peer.OrderType) pb.OrderType {
	if o == peer.TimeStamp {
		return pb.OrderType_TIMESTAMP
	}
	return pb.OrderType_RECEIVE
}

// resignActions pairs the resign actions with the protocol's:
// resignAction reads it one way, pbResignAction the other.
var resignActions = map[peer.ResignAction]pb.ResignAction{
	peer.UnconditionallyDivestAttributes:    pb.ResignAction_UNCONDITIONALLY_DIVEST_ATTRIBUTES,
	peer.DeleteObjects:                      pb.ResignAction_DELETE_OBJECTS,
	peer.CancelPendingOwnershipAcquisitions: pb.ResignAction_CANCEL_PENDING_OWNERSHIP_ACQUISITIONS,
	peer.DeleteObjectsThenDivest:            pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST,
	peer.CancelThenDeleteThenDivest:         pb.ResignAction_CANCEL_THEN_DELETE_THEN_DIVEST,
	peer.NoAction:                           pb.ResignAction_NO_ACTION,
}

func resignAction(a pb.ResignAction) (peer.ResignAction, error) {
	for p, q := range resignActions {
		if q == a {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: %v", peer.ErrInvalidResignAction, a)
}

func pbResignAction(a peer.ResignAction) pb.ResignAction {
	return lookupOr(resignActions, a, pb.ResignAction_CANCEL_THEN_DELETE_THEN_DIVEST)
}

// modules reads a FOM module set: files by content, zipped modules, and
// modules named by URL or path.
func (s *Session) modules(ctx context.Context, set *pb.FomModuleSet) ([]*fomxml.Document, error) {
	var out []*fomxml.Document
	for _, m := range set.GetFomModule() {
		d, err := s.module(ctx, m)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// module reads one FOM module. Errors: ErrCouldNotOpenFDD (nothing to
// read), ErrErrorReadingFDD (it does not parse).
func (s *Session) module(ctx context.Context, m *pb.FomModule) (*fomxml.Document, error) {
	var name string
	var data []byte
	switch {
	case m.GetFile() != nil:
		name, data = m.GetFile().GetName(), m.GetFile().GetContent()
	case m.GetCompressedModule() != nil:
		var err error
		if name, data, err = unzipModule(m.GetCompressedModule()); err != nil {
			return nil, fmt.Errorf("%w: %w", peer.ErrCouldNotOpenFDD, err)
		}
	case m.GetUrl() != "":
		var err error
		name = m.GetUrl()
		if data, err = s.host.cfg.ReadFOM(ctx, name); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", peer.ErrCouldNotOpenFDD, name, err)
		}
	default:
		return nil, fmt.Errorf("%w: an empty FOM module", peer.ErrCouldNotOpenFDD)
	}
	if name == "" {
		name = "module.xml"
	}
	d, err := fomxml.ParseBytes(name, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", peer.ErrReadingFDD, err)
	}
	return d, nil
}

// mim reads the MIM module of a create call: module's errors, turned into
// the MIM's (ErrCouldNotOpenMIM, ErrErrorReadingMIM).
func (s *Session) mim(ctx context.Context, m *pb.FomModule) (*fomxml.Document, error) {
	if m.GetUrl() == fomxml.MIMDesignator {
		return nil, fmt.Errorf("%w: %s", peer.ErrDesignatorIsHLAstandardMIM, m.GetUrl())
	}
	d, err := s.module(ctx, m)
	switch {
	case errors.Is(err, peer.ErrCouldNotOpenFDD):
		return nil, fmt.Errorf("%w: %w", peer.ErrCouldNotOpenMIM, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", peer.ErrErrorReadingMIM, err)
	}
	return d, nil
}

// maxModule bounds a FOM module read from a URL or unpacked from a zip.
const maxModule = 64 << 20

// unzipModule returns the one XML file of a zipped module (the first
// when there are several).
func unzipModule(b []byte) (string, []byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "", nil, err
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return "", nil, err
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxModule+1))
		rc.Close()
		if err != nil {
			return "", nil, err
		}
		if len(data) > maxModule {
			return "", nil, fmt.Errorf("%s is larger than %d bytes", f.Name, maxModule)
		}
		return f.Name, data, nil
	}
	return "", nil, fmt.Errorf("the zip archive holds no file")
}

// readFOM reads a module named by a path, a file: URL, or an http(s)
// URL.
func readFOM(ctx context.Context, name string) ([]byte, error) {
	u, err := url.Parse(name)
	switch {
	case err != nil || u.Scheme == "" || len(u.Scheme) == 1: // a path (C:\... on Windows)
		return readLimited(os.Open(filepath.Clean(name)))
	case u.Scheme == "file":
		p := u.Path
		if p == "" {
			p = u.Opaque
		}
		return readLimited(os.Open(filepath.FromSlash(p)))
	case u.Scheme == "http" || u.Scheme == "https":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, name, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s", resp.Status)
		}
		return readLimited(resp.Body, nil)
	}
	return nil, fmt.Errorf("unknown URL scheme %q", strings.ToLower(u.Scheme))
}

func readLimited(r io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxModule+1))
	if err == nil && len(b) > maxModule {
		err = fmt.Errorf("larger than %d bytes", maxModule)
	}
	return b, err
}
