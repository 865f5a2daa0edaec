package tick

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/internal/fpclient"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/fedpro/session"
	"github.com/meshrti/meshrti/peer/hla"
)

// FedProFederate is a federate that a `serve` daemon hosts for this process,
// reached over the Federate Protocol with fpclient.Conn: the calls the tick
// federate makes (Federate), and the callbacks it needs as peer events.
// HLAfloat64Time only. Its own saved state goes to files of its own
// (saveDir/FEDERATION/LABEL/NAME.state): the daemon keeps the RTI's.
type FedProFederate struct {
	c          *fpclient.Conn
	name       string
	handle     peer.FederateHandle
	federation string
	fdd        *fomxml.FDD
	saveDir    string

	mu       sync.Mutex
	queue    []*pb.CallbackRequest
	wake     chan struct{}
	restored string // the name InitiateFederateRestore restores as
}

var _ Federate = (*FedProFederate)(nil)

// errDaemonGone is the end of the connection to the daemon: it stopped
// or was killed, and the hosted federate with it.
var errDaemonGone = errors.New("fedpro: the daemon's connection closed")

type FedProConfig struct {
	Addr                   string
	Wait                   time.Duration // keep trying to connect this long
	Federation, Name, Type string
	Create                 bool
	SaveDir                string
	FOM                    []byte // nil: the bundled demo FOM
	FOMName                string
}

// OpenFedPro connects to the daemon (trying again until cfg.Wait
// passes), creates the federation when asked, and joins it.
func OpenFedPro(ctx context.Context, cfg FedProConfig) (*FedProFederate, error) {
	fom, fomName := cfg.FOM, cfg.FOMName
	if fom == nil {
		fom, fomName = demo.FOM, "demo.xml"
	}
	doc, err := fomxml.ParseBytes(fomName, fom)
	if err != nil {
		return nil, err
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		return nil, err
	}
	saveDir := cfg.SaveDir
	if saveDir == "" {
		saveDir = filepath.Join(os.TempDir(), "meshrti-fedpro-states")
	}
	f := &FedProFederate{name: cfg.Name, federation: cfg.Federation, fdd: fdd, saveDir: saveDir, wake: make(chan struct{}, 1)}
	deadline := time.Now().Add(cfg.Wait)
	for {
		var conn net.Conn
		if conn, err = net.DialTimeout("tcp", cfg.Addr, 5*time.Second); err == nil {
			f.c, err = fpclient.Open(conn, f.push)
		}
		if err == nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err != nil {
		return nil, fmt.Errorf("fedpro: %s: %w", cfg.Addr, err)
	}
	f.c.KeepOnly(func(*pb.CallbackRequest) bool { return false }) // f.queue keeps them
	if _, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}}); err != nil {
		f.c.Close()
		return nil, fmt.Errorf("fedpro: connect: %w", err)
	}
	if cfg.Create {
		module := &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: fomName, Content: fom}}}
		_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{
			FederationName: cfg.Federation, FomModule: module}}})
		if err != nil && !errors.Is(err, peer.ErrFederationExecutionAlreadyExists) {
			f.c.Close()
			return nil, fmt.Errorf("fedpro: create: %w", err)
		}
	}
	resp, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
		FederateName: cfg.Name, FederateType: cfg.Type, FederationName: cfg.Federation}}})
	if err != nil {
		f.c.Close()
		return nil, fmt.Errorf("join: %w", err)
	}
	if f.handle, err = hla.DecodeHandle[peer.FederateHandle](resp.GetJoinFederationExecutionWithNameResponse().GetResult().GetFederateHandle().GetData()); err != nil {
		f.c.Close()
		return nil, fmt.Errorf("join: %w", err)
	}
	return f, nil
}

// push queues a callback (on the connection's reader).
func (f *FedProFederate) push(cb *pb.CallbackRequest) {
	f.mu.Lock()
	f.queue = append(f.queue, cb)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Resign resigns and ends the session.
func (f *FedProFederate) Resign() error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{
		ResignAction: pb.ResignAction_DELETE_OBJECTS}}})
	f.c.Send(session.MsgTerminateSession, nil)
	if werr := f.c.WaitControl(session.MsgSessionTerminated, 5*time.Second); err == nil {
		err = werr
	}
	return err
}

func (f *FedProFederate) Close() { f.c.Close() }

// fpExceptions are the exceptions the tick federate tells apart, as the
// errors of package peer that the daemon reported.
var fpExceptions = map[string]error{
	"SaveInProgress":                        peer.ErrSaveInProgress,
	"RestoreInProgress":                     peer.ErrRestoreInProgress,
	"SynchronizationPointLabelNotAnnounced": peer.ErrSynchronizationPointLabelNotAnnounced,
	"FederateNameAlreadyInUse":              peer.ErrFederateNameAlreadyInUse,
	"FederationExecutionAlreadyExists":      peer.ErrFederationExecutionAlreadyExists,
	"NotConnected":                          peer.ErrNotConnected,
	"FederateNotExecutionMember":            peer.ErrFederateNotExecutionMember,
}

// do makes a call and returns its response; an exception is an error,
// wrapping the error of package peer it names when fpExceptions has it.
func (f *FedProFederate) do(req *pb.CallRequest) (*pb.CallResponse, error) {
	select {
	case <-f.c.Done():
		return nil, fmt.Errorf("%w: %v", errDaemonGone, f.c.Err())
	default:
	}
	resp, err := f.c.Call(req)
	if err == nil {
		return resp, nil
	}
	if e := resp.GetExceptionData(); e != nil {
		if sentinel, ok := fpExceptions[e.GetExceptionName()]; ok {
			return resp, fmt.Errorf("%w: %s", sentinel, e.GetDetails())
		}
		return resp, fmt.Errorf("%s: %s", e.GetExceptionName(), e.GetDetails())
	}
	select {
	case <-f.c.Done():
		return nil, fmt.Errorf("%w: %v", errDaemonGone, err)
	default:
	}
	return nil, err
}

func (f *FedProFederate) Name() string                { return f.name }
func (f *FedProFederate) Handle() peer.FederateHandle { return f.handle }
func (f *FedProFederate) FDD() *fomxml.FDD            { return f.fdd }

// Stats: a daemon's federate's counters are the daemon's (its metrics).
func (f *FedProFederate) Stats() peer.Stats { return peer.Stats{} }

// Next returns the next callback the tick federate reads, as an event;
// the connection's end, once every callback before it was read.
func (f *FedProFederate) Next(ctx context.Context) (peer.Event, error) {
	for {
		f.mu.Lock()
		var cb *pb.CallbackRequest
		if len(f.queue) > 0 {
			cb = f.queue[0]
			f.queue = f.queue[1:]
		}
		f.mu.Unlock()
		if cb != nil {
			if ev := f.event(cb); ev != nil {
				return ev, nil
			}
			continue
		}
		select {
		case <-f.wake:
		case <-f.c.Done():
			f.mu.Lock()
			empty := len(f.queue) == 0
			f.mu.Unlock()
			if empty {
				return nil, fmt.Errorf("%w: %v", errDaemonGone, f.c.Err())
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// event converts the callbacks the tick federate reads; nil for the
// others. A producing federate the daemon does not convey (the
// federation's HLAconveyProducingFederate switch is off) is taken from
// the instance's handle: its registrar.
func (f *FedProFederate) event(cb *pb.CallbackRequest) peer.Event {
	switch {
	case cb.GetTimeRegulationEnabled() != nil:
		if t, ok := fpTimeOf(cb.GetTimeRegulationEnabled().GetTime()); ok {
			return peer.TimeRegulationEnabled{Time: t}
		}
	case cb.GetTimeConstrainedEnabled() != nil:
		if t, ok := fpTimeOf(cb.GetTimeConstrainedEnabled().GetTime()); ok {
			return peer.TimeConstrainedEnabled{Time: t}
		}
	case cb.GetTimeAdvanceGrant() != nil:
		if t, ok := fpTimeOf(cb.GetTimeAdvanceGrant().GetTime()); ok {
			return peer.TimeAdvanceGrant{Time: t}
		}
	case cb.GetDiscoverObjectInstance() != nil:
		d := cb.GetDiscoverObjectInstance()
		obj, err := hla.DecodeObjectInstanceHandle(d.GetObjectInstance().GetData())
		if err != nil {
			return nil
		}
		class, _ := hla.DecodeHandle[peer.ObjectClassHandle](d.GetObjectClass().GetData())
		return peer.DiscoverObjectInstance{Object: obj, Class: class, Name: d.GetObjectInstanceName(), Producer: fpProducer(d.GetProducingFederate(), obj)}
	case cb.GetReflectAttributeValuesWithTime() != nil:
		r := cb.GetReflectAttributeValuesWithTime()
		obj, err := hla.DecodeObjectInstanceHandle(r.GetObjectInstance().GetData())
		t, ok := fpTimeOf(r.GetTime())
		if err != nil || !ok {
			return nil
		}
		return peer.ReflectAttributeValues{Object: obj, Values: fpValues(r.GetAttributeValues()), Time: t, Producer: fpProducer(r.GetProducingFederate(), obj)}
	case cb.GetReflectAttributeValues() != nil:
		r := cb.GetReflectAttributeValues()
		obj, err := hla.DecodeObjectInstanceHandle(r.GetObjectInstance().GetData())
		if err != nil {
			return nil
		}
		return peer.ReflectAttributeValues{Object: obj, Values: fpValues(r.GetAttributeValues()), Producer: fpProducer(r.GetProducingFederate(), obj)}
	case cb.GetConnectionLost() != nil:
		return peer.ConnectionLost{Reason: cb.GetConnectionLost().GetFaultDescription()}
	case cb.GetAnnounceSynchronizationPoint() != nil:
		a := cb.GetAnnounceSynchronizationPoint()
		return peer.AnnounceSynchronizationPoint{Label: a.GetSynchronizationPointLabel(), Tag: a.GetUserSuppliedTag()}
	case cb.GetFederationSynchronized() != nil:
		return peer.FederationSynchronized{Label: cb.GetFederationSynchronized().GetSynchronizationPointLabel()}
	case cb.GetInitiateFederateSave() != nil:
		return peer.InitiateFederateSave{Label: cb.GetInitiateFederateSave().GetLabel()}
	case cb.GetInitiateFederateSaveWithTime() != nil:
		s := cb.GetInitiateFederateSaveWithTime()
		t, ok := fpTimeOf(s.GetTime())
		return peer.InitiateFederateSave{Label: s.GetLabel(), Time: t, HasTime: ok}
	case cb.GetFederationSaved() != nil:
		return peer.FederationSaved{}
	case cb.GetFederationNotSaved() != nil:
		return peer.FederationNotSaved{Reason: peer.SaveFailureReason(cb.GetFederationNotSaved().GetReason()) + 1}
	case cb.GetRequestFederationRestoreSucceeded() != nil:
		return peer.RequestFederationRestoreSucceeded{Label: cb.GetRequestFederationRestoreSucceeded().GetLabel()}
	case cb.GetRequestFederationRestoreFailed() != nil:
		return peer.RequestFederationRestoreFailed{Label: cb.GetRequestFederationRestoreFailed().GetLabel()}
	case cb.GetFederationRestoreBegun() != nil:
		return peer.FederationRestoreBegun{}
	case cb.GetInitiateFederateRestore() != nil:
		r := cb.GetInitiateFederateRestore()
		h, _ := hla.DecodeHandle[peer.FederateHandle](r.GetPostRestoreFederateHandle().GetData())
		f.mu.Lock()
		f.restored = r.GetFederateName()
		f.mu.Unlock()
		return peer.InitiateFederateRestore{Label: r.GetLabel(), Name: r.GetFederateName(), Handle: h}
	case cb.GetFederationRestored() != nil:
		return peer.FederationRestored{}
	case cb.GetFederationNotRestored() != nil:
		return peer.FederationNotRestored{Reason: peer.RestoreFailureReason(cb.GetFederationNotRestored().GetReason()) + 1}
	}
	return nil
}

// fpProducer is the producing federate a callback conveys, else the
// instance's registrar.
func fpProducer(h *pb.FederateHandle, obj peer.ObjectInstanceHandle) peer.FederateHandle {
	if h != nil {
		if p, err := hla.DecodeHandle[peer.FederateHandle](h.GetData()); err == nil {
			return p
		}
	}
	return obj.Federate
}

func fpValues(m *pb.AttributeHandleValueMap) peer.AttributeValues {
	out := peer.AttributeValues{}
	for _, v := range m.GetAttributeHandleValue() {
		if a, err := hla.DecodeHandle[peer.AttributeHandle](v.GetAttributeHandle().GetData()); err == nil {
			out[a] = v.GetValue()
		}
	}
	return out
}

// fpTimeOf decodes an HLAfloat64Time.
func fpTimeOf(t *pb.LogicalTime) (peer.LogicalTime, bool) {
	b := t.GetData()
	if len(b) != 8 {
		return nil, false
	}
	return peer.Float64Time(math.Float64frombits(binary.BigEndian.Uint64(b))), true
}

// fpTime encodes t as an HLAfloat64Time.
func fpTime(t peer.LogicalTime) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(t.Float()))
}

func fpAttrs(attrs []peer.AttributeHandle) *pb.AttributeHandleSet {
	set := &pb.AttributeHandleSet{}
	for _, a := range attrs {
		set.AttributeHandle = append(set.AttributeHandle, &pb.AttributeHandle{Data: peer.EncodeHandle(a)})
	}
	return set
}

func (f *FedProFederate) GetObjectClassHandle(name string) (peer.ObjectClassHandle, error) {
	resp, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: name}}})
	if err != nil {
		return 0, err
	}
	return hla.DecodeHandle[peer.ObjectClassHandle](resp.GetGetObjectClassHandleResponse().GetResult().GetData())
}

func (f *FedProFederate) GetAttributeHandle(class peer.ObjectClassHandle, name string) (peer.AttributeHandle, error) {
	resp, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_GetAttributeHandleRequest{GetAttributeHandleRequest: &pb.GetAttributeHandleRequest{
		ObjectClass: &pb.ObjectClassHandle{Data: peer.EncodeHandle(class)}, AttributeName: name}}})
	if err != nil {
		return 0, err
	}
	return hla.DecodeHandle[peer.AttributeHandle](resp.GetGetAttributeHandleResponse().GetResult().GetData())
}

func (f *FedProFederate) GetFederateName(h peer.FederateHandle) (string, error) {
	resp, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_GetFederateNameRequest{GetFederateNameRequest: &pb.GetFederateNameRequest{
		Federate: &pb.FederateHandle{Data: peer.EncodeHandle(h)}}}})
	if err != nil {
		return "", err
	}
	return resp.GetGetFederateNameResponse().GetResult(), nil
}

func (f *FedProFederate) PublishObjectClassAttributes(class peer.ObjectClassHandle, attrs ...peer.AttributeHandle) error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{
		ObjectClass: &pb.ObjectClassHandle{Data: peer.EncodeHandle(class)}, Attributes: fpAttrs(attrs)}}})
	return err
}

func (f *FedProFederate) SubscribeObjectClassAttributes(class peer.ObjectClassHandle, attrs ...peer.AttributeHandle) error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{
		ObjectClass: &pb.ObjectClassHandle{Data: peer.EncodeHandle(class)}, Attributes: fpAttrs(attrs)}}})
	return err
}

func (f *FedProFederate) EnableTimeRegulation(lookahead peer.LogicalTime) error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_EnableTimeRegulationRequest{EnableTimeRegulationRequest: &pb.EnableTimeRegulationRequest{
		Lookahead: &pb.LogicalTimeInterval{Data: fpTime(lookahead)}}}})
	return err
}

func (f *FedProFederate) EnableTimeConstrained() error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_EnableTimeConstrainedRequest{EnableTimeConstrainedRequest: &pb.EnableTimeConstrainedRequest{}}})
	return err
}

func (f *FedProFederate) RegisterObjectInstance(class peer.ObjectClassHandle, name string) (peer.ObjectInstanceHandle, error) {
	ch := &pb.ObjectClassHandle{Data: peer.EncodeHandle(class)}
	req := &pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: ch}}}
	if name != "" {
		req = &pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceWithNameRequest{RegisterObjectInstanceWithNameRequest: &pb.RegisterObjectInstanceWithNameRequest{
			ObjectClass: ch, ObjectInstanceName: name}}}
	}
	resp, err := f.do(req)
	if err != nil {
		return peer.ObjectInstanceHandle{}, err
	}
	h := resp.GetRegisterObjectInstanceResponse().GetResult()
	if name != "" {
		h = resp.GetRegisterObjectInstanceWithNameResponse().GetResult()
	}
	return hla.DecodeObjectInstanceHandle(h.GetData())
}

func (f *FedProFederate) UpdateAttributeValuesWithTime(obj peer.ObjectInstanceHandle, values peer.AttributeValues, tag []byte, t peer.LogicalTime) error {
	m := &pb.AttributeHandleValueMap{}
	for a, v := range values {
		m.AttributeHandleValue = append(m.AttributeHandleValue, &pb.AttributeHandleValue{AttributeHandle: &pb.AttributeHandle{Data: peer.EncodeHandle(a)}, Value: v})
	}
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesWithTimeRequest{UpdateAttributeValuesWithTimeRequest: &pb.UpdateAttributeValuesWithTimeRequest{
		ObjectInstance: &pb.ObjectInstanceHandle{Data: obj.Encode()}, AttributeValues: m, UserSuppliedTag: tag, Time: &pb.LogicalTime{Data: fpTime(t)}}}})
	return err
}

func (f *FedProFederate) TimeAdvanceRequest(t peer.LogicalTime) error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_TimeAdvanceRequestRequest{TimeAdvanceRequestRequest: &pb.TimeAdvanceRequestRequest{
		Time: &pb.LogicalTime{Data: fpTime(t)}}}})
	return err
}

func (f *FedProFederate) SynchronizationPointAchieved(label string, successfully bool) error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_SynchronizationPointAchievedRequest{SynchronizationPointAchievedRequest: &pb.SynchronizationPointAchievedRequest{
		SynchronizationPointLabel: label, Successfully: successfully}}})
	return err
}

func (f *FedProFederate) RequestFederationSaveWithTime(label string, t peer.LogicalTime) error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_RequestFederationSaveWithTimeRequest{RequestFederationSaveWithTimeRequest: &pb.RequestFederationSaveWithTimeRequest{
		Label: label, Time: &pb.LogicalTime{Data: fpTime(t)}}}})
	return err
}

func (f *FedProFederate) RequestFederationRestore(label string) error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_RequestFederationRestoreRequest{RequestFederationRestoreRequest: &pb.RequestFederationRestoreRequest{Label: label}}})
	return err
}

func (f *FedProFederate) FederateSaveBegun() error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_FederateSaveBegunRequest{FederateSaveBegunRequest: &pb.FederateSaveBegunRequest{}}})
	return err
}

func (f *FedProFederate) FederateSaveComplete() error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_FederateSaveCompleteRequest{FederateSaveCompleteRequest: &pb.FederateSaveCompleteRequest{}}})
	return err
}

func (f *FedProFederate) FederateRestoreComplete() error {
	_, err := f.do(&pb.CallRequest{CallRequest: &pb.CallRequest_FederateRestoreCompleteRequest{FederateRestoreCompleteRequest: &pb.FederateRestoreCompleteRequest{}}})
	return err
}

// statePath is where the federate's own state of label goes: by the
// name of the saved federate (a federate restores as the one that saved
// it, its own name or, joined in place of a crashed one, that one's).
func (f *FedProFederate) statePath(label, name string) string {
	return filepath.Join(f.saveDir, url.PathEscape(f.federation), url.PathEscape(label), url.PathEscape(name)+".state")
}

// SavedStateWriter writes the federate's own state of label; it is in
// place, synced, once closed.
func (f *FedProFederate) SavedStateWriter(label string) (io.WriteCloser, error) {
	path := f.statePath(label, f.name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*")
	if err != nil {
		return nil, err
	}
	return &stateFile{File: tmp, path: path}, nil
}

// stateFile is a state file written beside its place and renamed into
// it at Close, after a sync.
type stateFile struct {
	*os.File
	path string
}

func (s *stateFile) Close() error {
	err := s.Sync()
	if cerr := s.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(s.Name(), s.path)
	}
	if err != nil {
		os.Remove(s.Name())
	}
	return err
}

// RestoredStateReader reads the state of the federate this one restores
// as (InitiateFederateRestore).
func (f *FedProFederate) RestoredStateReader(label string) (io.ReadCloser, error) {
	f.mu.Lock()
	name := f.restored
	f.mu.Unlock()
	if name == "" {
		name = f.name
	}
	r, err := os.Open(f.statePath(label, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q has no state of %q", peer.ErrSpecifiedSaveLabelDoesNotExist, label, name)
	}
	return r, err
}
