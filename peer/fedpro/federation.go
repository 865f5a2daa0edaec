package fedpro

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/metrics"
)

// federationCalls adds the federation management calls (1516.1 §4) to
// t: connect, create, destroy, list, join, resign, synchronization
// points, save and restore.
func federationCalls(t callTable) {
	on(t, func(s *Session, _ *pb.ConnectRequest) (*pb.ConnectResponse, error) {
		r := s.configure(nil)
		return &pb.ConnectResponse{ConfigurationResult: r}, s.connect(nil)
	})
	on(t, func(s *Session, req *pb.ConnectWithCredentialsRequest) (*pb.ConnectWithCredentialsResponse, error) {
		r := s.configure(nil)
		return &pb.ConnectWithCredentialsResponse{ConfigurationResult: r}, s.connect(req.GetCredentials())
	})
	on(t, func(s *Session, req *pb.ConnectWithConfigurationRequest) (*pb.ConnectWithConfigurationResponse, error) {
		r := s.configure(req.GetRtiConfiguration())
		return &pb.ConnectWithConfigurationResponse{ConfigurationResult: r}, s.connect(nil)
	})
	on(t, func(s *Session, req *pb.ConnectWithConfigurationAndCredentialsRequest) (*pb.ConnectWithConfigurationAndCredentialsResponse, error) {
		r := s.configure(req.GetRtiConfiguration())
		return &pb.ConnectWithConfigurationAndCredentialsResponse{ConfigurationResult: r}, s.connect(req.GetCredentials())
	})
	on(t, func(s *Session, _ *pb.DisconnectRequest) (*pb.DisconnectResponse, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fed != nil {
			return nil, fmt.Errorf("%w: resign first", peer.ErrFederateIsExecutionMember)
		}
		s.connected = false
		return &pb.DisconnectResponse{}, nil
	})
	on(t, func(s *Session, req *pb.CreateFederationExecutionRequest) (*pb.CreateFederationExecutionResponse, error) {
		return &pb.CreateFederationExecutionResponse{}, s.create(req.GetFederationName(), &pb.FomModuleSet{FomModule: []*pb.FomModule{req.GetFomModule()}}, nil, "")
	})
	on(t, func(s *Session, req *pb.CreateFederationExecutionWithTimeRequest) (*pb.CreateFederationExecutionWithTimeResponse, error) {
		return &pb.CreateFederationExecutionWithTimeResponse{}, s.create(req.GetFederationName(), &pb.FomModuleSet{FomModule: []*pb.FomModule{req.GetFomModule()}}, nil, req.GetLogicalTimeImplementationName())
	})
	on(t, func(s *Session, req *pb.CreateFederationExecutionWithModulesRequest) (*pb.CreateFederationExecutionWithModulesResponse, error) {
		return &pb.CreateFederationExecutionWithModulesResponse{}, s.create(req.GetFederationName(), req.GetFomModules(), nil, "")
	})
	on(t, func(s *Session, req *pb.CreateFederationExecutionWithModulesAndTimeRequest) (*pb.CreateFederationExecutionWithModulesAndTimeResponse, error) {
		return &pb.CreateFederationExecutionWithModulesAndTimeResponse{}, s.create(req.GetFederationName(), req.GetFomModules(), nil, req.GetLogicalTimeImplementationName())
	})
	on(t, func(s *Session, req *pb.CreateFederationExecutionWithMIMRequest) (*pb.CreateFederationExecutionWithMIMResponse, error) {
		return &pb.CreateFederationExecutionWithMIMResponse{}, s.create(req.GetFederationName(), req.GetFomModules(), withMIM(req.GetMimModule()), "")
	})
	on(t, func(s *Session, req *pb.CreateFederationExecutionWithMIMAndTimeRequest) (*pb.CreateFederationExecutionWithMIMAndTimeResponse, error) {
		return &pb.CreateFederationExecutionWithMIMAndTimeResponse{}, s.create(req.GetFederationName(), req.GetFomModules(), withMIM(req.GetMimModule()), req.GetLogicalTimeImplementationName())
	})
	on(t, func(s *Session, req *pb.DestroyFederationExecutionRequest) (*pb.DestroyFederationExecutionResponse, error) {
		if err := s.needConnected(); err != nil {
			return nil, err
		}
		ctx, cancel := s.callCtx()
		defer cancel()
		name := req.GetFederationName()
		if name == "" {
			return nil, fmt.Errorf("%w: an empty federation name", peer.ErrFederationExecutionDoesNotExist)
		}
		h := s.host
		h.mu.Lock()
		_, pending := h.created[name]
		delete(h.created, name)
		h.mu.Unlock()
		if pending && h.gossipAlone(name) {
			return &pb.DestroyFederationExecutionResponse{}, nil
		}
		cfg := h.base(name)
		cfg.Federation = name
		return &pb.DestroyFederationExecutionResponse{}, peer.DestroyFederationExecution(ctx, cfg)
	})
	on(t, func(s *Session, _ *pb.ListFederationExecutionsRequest) (*pb.ListFederationExecutionsResponse, error) {
		return &pb.ListFederationExecutionsResponse{}, s.list()
	})
	on(t, func(s *Session, req *pb.ListFederationExecutionMembersRequest) (*pb.ListFederationExecutionMembersResponse, error) {
		return &pb.ListFederationExecutionMembersResponse{}, s.listMembers(req.GetFederationName())
	})
	on(t, func(s *Session, req *pb.JoinFederationExecutionRequest) (*pb.JoinFederationExecutionResponse, error) {
		r, err := s.join("", req.GetFederateType(), req.GetFederationName(), nil)
		return &pb.JoinFederationExecutionResponse{Result: r}, err
	})
	on(t, func(s *Session, req *pb.JoinFederationExecutionWithModulesRequest) (*pb.JoinFederationExecutionWithModulesResponse, error) {
		r, err := s.join("", req.GetFederateType(), req.GetFederationName(), req.GetAdditionalFomModules())
		return &pb.JoinFederationExecutionWithModulesResponse{Result: r}, err
	})
	on(t, func(s *Session, req *pb.JoinFederationExecutionWithNameRequest) (*pb.JoinFederationExecutionWithNameResponse, error) {
		r, err := s.join(req.GetFederateName(), req.GetFederateType(), req.GetFederationName(), nil)
		return &pb.JoinFederationExecutionWithNameResponse{Result: r}, err
	})
	on(t, func(s *Session, req *pb.JoinFederationExecutionWithNameAndModulesRequest) (*pb.JoinFederationExecutionWithNameAndModulesResponse, error) {
		r, err := s.join(req.GetFederateName(), req.GetFederateType(), req.GetFederationName(), req.GetAdditionalFomModules())
		return &pb.JoinFederationExecutionWithNameAndModulesResponse{Result: r}, err
	})
	on(t, func(s *Session, req *pb.ResignFederationExecutionRequest) (*pb.ResignFederationExecutionResponse, error) {
		return &pb.ResignFederationExecutionResponse{}, s.resign(req.GetResignAction())
	})

	// Synchronization points.
	act(t, func(f *peer.Federate, req *pb.RegisterFederationSynchronizationPointRequest) error {
		return f.RegisterFederationSynchronizationPoint(req.GetSynchronizationPointLabel(), req.GetUserSuppliedTag())
	})
	act(t, func(f *peer.Federate, req *pb.RegisterFederationSynchronizationPointWithSetRequest) error {
		set, err := fedSet(req.GetSynchronizationSet())
		if err != nil {
			return err
		}
		return f.RegisterFederationSynchronizationPointWithSet(req.GetSynchronizationPointLabel(), req.GetUserSuppliedTag(), set...)
	})
	act(t, func(f *peer.Federate, req *pb.SynchronizationPointAchievedRequest) error {
		return f.SynchronizationPointAchieved(req.GetSynchronizationPointLabel(), req.GetSuccessfully())
	})

	// Save and restore.
	act(t, func(f *peer.Federate, req *pb.RequestFederationSaveRequest) error {
		return f.RequestFederationSave(req.GetLabel())
	})
	act(t, func(f *peer.Federate, req *pb.RequestFederationSaveWithTimeRequest) error {
		return withTime(f, req.GetTime(), func(t peer.LogicalTime) error { return f.RequestFederationSaveWithTime(req.GetLabel(), t) })
	})
	act(t, func(f *peer.Federate, _ *pb.FederateSaveBegunRequest) error { return f.FederateSaveBegun() })
	act(t, func(f *peer.Federate, _ *pb.FederateSaveCompleteRequest) error { return f.FederateSaveComplete() })
	act(t, func(f *peer.Federate, _ *pb.FederateSaveNotCompleteRequest) error { return f.FederateSaveNotComplete() })
	act(t, func(f *peer.Federate, _ *pb.AbortFederationSaveRequest) error { return f.AbortFederationSave() })
	act(t, func(f *peer.Federate, _ *pb.QueryFederationSaveStatusRequest) error {
		return f.QueryFederationSaveStatus()
	})
	act(t, func(f *peer.Federate, req *pb.RequestFederationRestoreRequest) error {
		return f.RequestFederationRestore(req.GetLabel())
	})
	act(t, func(f *peer.Federate, _ *pb.FederateRestoreCompleteRequest) error { return f.FederateRestoreComplete() })
	act(t, func(f *peer.Federate, _ *pb.FederateRestoreNotCompleteRequest) error {
		return f.FederateRestoreNotComplete()
	})
	act(t, func(f *peer.Federate, _ *pb.AbortFederationRestoreRequest) error { return f.AbortFederationRestore() })
	act(t, func(f *peer.Federate, _ *pb.QueryFederationRestoreStatusRequest) error {
		return f.QueryFederationRestoreStatus()
	})
}

// connect marks the session connected, once Config.Authenticate (when
// set) accepted creds (nil: a connect without credentials). The daemon
// is the connection: the configuration names nothing to connect to.
func (s *Session) connect(creds *pb.Credentials) error {
	s.mu.Lock()
	connected := s.connected
	s.mu.Unlock()
	if connected {
		return peer.ErrAlreadyConnected
	}
	if err := s.authenticate(creds); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.connected {
		return peer.ErrAlreadyConnected
	}
	s.connected = true
	return nil
}

func (s *Session) needConnected() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.connected {
		return fmt.Errorf("%w: connect first", peer.ErrNotConnected)
	}
	return nil
}

// configure takes a connect's configuration (nil: none) for a session
// not connected yet, and says what the daemon did with it. The daemon
// uses its own settings (the RTI address is the daemon); of the
// additional settings (lines KEY=VALUE) it reads API.version, which
// Pitch's 1516e client sends (API.version=IEEE 1516-2010) and which
// makes the session name exceptions as 1516e does (evolvedNames). A
// session connected without it speaks HLA 4.
func (s *Session) configure(c *pb.RtiConfiguration) *pb.ConfigurationResult {
	evolved, others := false, false
	for _, line := range strings.Split(c.GetAdditionalSettings(), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case k == "":
		case strings.EqualFold(strings.TrimSpace(k), "API.version"):
			v = strings.TrimSpace(v)
			evolved = strings.EqualFold(v, "IEEE 1516-2010") || strings.EqualFold(v, "IEEE 1516-2000")
		default:
			others = true
		}
	}
	s.mu.Lock()
	if !s.connected {
		s.evolved.Store(evolved)
	}
	s.mu.Unlock()
	r := &pb.ConfigurationResult{}
	switch {
	case others:
		r.AdditionalSettingsResultCode = pb.AdditionalSettingsResultCode_SETTINGS_IGNORED
		r.Message = "meshrti takes its settings from the daemon's configuration (it reads API.version only)"
	case c.GetAdditionalSettings() != "":
		r.AdditionalSettingsResultCode = pb.AdditionalSettingsResultCode_SETTINGS_APPLIED
	}
	return r
}

// withMIM makes a create call's MIM argument non-nil, so that an absent
// one is refused (CouldNotOpenMIM) rather than taken as the standard MIM.
func withMIM(m *pb.FomModule) *pb.FomModule {
	if m == nil {
		return &pb.FomModule{}
	}
	return m
}

// create creates a federation execution with modules, a MIM (nil for
// the standard one) and a time representation ("" for the default).
func (s *Session) create(name string, set *pb.FomModuleSet, mimModule *pb.FomModule, timeName string) error {
	if err := s.needConnected(); err != nil {
		return err
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	var mim *fomxml.Document
	if mimModule != nil {
		var err error
		if mim, err = s.mim(ctx, mimModule); err != nil {
			return err
		}
	}
	docs, err := s.modules(ctx, set)
	if err != nil {
		return err
	}
	if timeName != "" && timeName != string(peer.HLAfloat64Time) && timeName != string(peer.HLAinteger64Time) {
		return fmt.Errorf("%w: %q", peer.ErrCouldNotCreateLogicalTimeFactory, timeName)
	}
	h := s.host
	if h.gossipAlone(name) {
		// A cluster of one would vanish with the call's node: the first
		// join creates the federation (join).
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, dup := h.created[name]; dup {
			return fmt.Errorf("%w: %q", peer.ErrFederationExecutionAlreadyExists, name)
		}
		c := peer.Config{Federation: name, FOMModules: docs, MIMModule: mim, TimeRepresentation: timeName}
		if err := c.CheckModules(); err != nil {
			return err
		}
		h.created[name] = c
		return nil
	}
	cfg := h.base(name)
	cfg.Federation, cfg.FOMModules, cfg.MIMModule, cfg.TimeRepresentation = name, docs, mim, timeName
	return peer.CreateFederationExecution(ctx, cfg)
}

// list answers with ReportFederationExecutions, as the standard does.
func (s *Session) list() error {
	if err := s.needConnected(); err != nil {
		return err
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	h := s.host
	times := map[string]string{}
	var names []string
	add := func(n, t string) {
		if _, seen := times[n]; !seen {
			names = append(names, n)
		}
		if times[n] == "" {
			times[n] = t
		}
	}
	if h.cfg.Base.Control != nil || h.cfg.NewControl != nil {
		// A shared control plane knows every federation; the name only
		// opens it. (A gossip cluster serves one federation and is found
		// by its name: those of the daemon's sessions are added below.)
		cfg := h.base("")
		cfg.Federation = "list"
		list, err := peer.ListFederationExecutions(ctx, cfg)
		if err != nil {
			return err
		}
		for _, i := range list {
			add(i.FederationExecutionName, i.LogicalTimeImplementationName)
		}
	}
	if h.cfg.Federations != nil {
		for _, i := range h.cfg.Federations() {
			add(i.FederationExecutionName, i.LogicalTimeImplementationName)
		}
	}
	h.mu.Lock()
	for n, c := range h.created {
		add(n, c.TimeRepresentation)
	}
	for f, in := range h.joined() {
		add(in, f.GetTimeFactory().Name())
	}
	h.mu.Unlock()
	set := &pb.FederationExecutionInformationSet{}
	for _, n := range names {
		t := times[n]
		if t == "" {
			t = string(peer.HLAfloat64Time) // the default
		}
		set.FederationExecutionInformation = append(set.FederationExecutionInformation, &pb.FederationExecutionInformation{FederationExecutionName: n, LogicalTimeImplementationName: t})
	}
	return s.pushCallback(&pb.CallbackRequest{CallbackRequest: &pb.CallbackRequest_ReportFederationExecutions{ReportFederationExecutions: &pb.ReportFederationExecutions{Report: set}}})
}

// listMembers answers with reportFederationExecutionMembers, or
// reportFederationExecutionDoesNotExist, as the standard does.
func (s *Session) listMembers(name string) error {
	if err := s.needConnected(); err != nil {
		return err
	}
	h := s.host
	h.mu.Lock()
	_, pending := h.created[name]
	h.mu.Unlock()
	report := &pb.FederationExecutionMemberInformationSet{}
	if !(pending && h.gossipAlone(name)) { // else: it exists, empty, in this daemon only
		ctx, cancel := s.callCtx()
		defer cancel()
		cfg := h.base(name)
		cfg.Federation = name
		members, err := peer.ListFederationExecutionMembers(ctx, cfg)
		if errors.Is(err, peer.ErrFederationExecutionDoesNotExist) {
			return s.pushCallback(&pb.CallbackRequest{CallbackRequest: &pb.CallbackRequest_ReportFederationExecutionDoesNotExist{
				ReportFederationExecutionDoesNotExist: &pb.ReportFederationExecutionDoesNotExist{FederationName: name}}})
		}
		if err != nil {
			return err
		}
		for _, m := range members {
			report.FederationExecutionMemberInformation = append(report.FederationExecutionMemberInformation, &pb.FederationExecutionMemberInformation{FederateName: m.Name, FederateType: m.Type})
		}
	}
	return s.pushCallback(&pb.CallbackRequest{CallbackRequest: &pb.CallbackRequest_ReportFederationExecutionMembers{
		ReportFederationExecutionMembers: &pb.ReportFederationExecutionMembers{FederationName: name, Report: report}}})
}

// join joins the session's federate.
func (s *Session) join(name, typ, federation string, extra *pb.FomModuleSet) (*pb.JoinResult, error) {
	s.mu.Lock()
	switch {
	case !s.connected:
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: connect first", peer.ErrNotConnected)
	case s.fed != nil:
		s.mu.Unlock()
		return nil, peer.ErrFederateAlreadyExecutionMember
	}
	s.mu.Unlock()
	if federation == "" {
		return nil, fmt.Errorf("%w: an empty federation name", peer.ErrFederationExecutionDoesNotExist)
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	var docs []*fomxml.Document
	if extra != nil {
		var err error
		if docs, err = s.modules(ctx, extra); err != nil {
			return nil, err
		}
	}
	h := s.host
	cfg := h.base(federation)
	cfg.Federation, cfg.FederateName, cfg.FederateType = federation, name, typ
	cfg.FOMModules = append(cfg.FOMModules, docs...)
	cfg.Create = false
	cfg.AdoptTime = true         // a join names no time: the federation's
	reg := metrics.NewRegistry() // each federate its own: a name may come again
	cfg.Metrics = reg
	h.mu.Lock()
	pending, created := h.created[federation]
	h.mu.Unlock()
	if created && h.gossipAlone(federation) {
		// Created through this daemon, not yet by anybody: this join
		// creates it, with the modules it was created with.
		cfg.Create = true
		cfg.FOMModules = append(slices.Clone(pending.FOMModules), docs...)
		cfg.MIMModule = pending.MIMModule
		cfg.TimeRepresentation = pending.TimeRepresentation
	}
	f, err := peer.Join(ctx, cfg)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	delete(h.created, federation)
	h.joinedWith[federation] = peer.Config{FOMModules: cfg.FOMModules, MIMModule: cfg.MIMModule, TimeRepresentation: f.GetTimeFactory().Name()}
	h.mu.Unlock()
	s.mu.Lock()
	s.metrics = reg
	s.mu.Unlock()
	s.joined(f, federation)
	gossip, _ := f.GossipAddr()
	h.logf("%q joined federation %q (handle %d, gossip %s)", f.Name(), federation, f.Handle(), gossip)
	return &pb.JoinResult{FederateHandle: pbFed(f.Handle()), LogicalTimeImplementationName: f.GetTimeFactory().Name()}, nil
}

// resign resigns the session's federate and closes it; the session stays
// connected.
func (s *Session) resign(a pb.ResignAction) error {
	action, err := resignAction(a)
	if err != nil {
		return err
	}
	f, err := s.federate()
	if err != nil {
		return err
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	if err := f.ResignFederationExecution(ctx, action); err != nil {
		return err
	}
	s.host.logf("%q resigned from federation %q", f.Name(), s.federation)
	s.mu.Lock()
	s.fed = nil
	stop, done := s.stop, s.pumpDone
	s.stop, s.pumpDone = nil, nil
	s.mu.Unlock()
	f.Close()
	if done != nil {
		<-done // the pump pushes what came before the resignation, then stops
		stop()
	}
	s.host.left(s.federation)
	return nil
}

// pushCallback sends one callback now (a call's answer that the standard
// gives as a callback).
func (s *Session) pushCallback(cb *pb.CallbackRequest) error {
	b, err := proto.Marshal(cb)
	if err != nil {
		return fmt.Errorf("%w: %w", peer.ErrRTIinternalError, err)
	}
	s.host.stats.callbacks.Add(1)
	if err := s.push(b); err != nil {
		s.host.stats.pushFailed.Add(1)
	}
	return nil
}
