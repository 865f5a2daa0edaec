package tick

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
)

// labWork is the fault lab's workload on top of the tick federate's time
// steps (docs/reliability.md). At each step:
//
//   - ownership under contention: the federate asks for the Blob of one
//     instance, in turn over the instances it knows: at odd steps with
//     AttributeOwnershipAcquisition (the negotiated path: the owner hears
//     RequestAttributeOwnershipRelease and gives it up if wanted), at even
//     steps with AttributeOwnershipAcquisitionIfAvailable (the unowned
//     path, decided through the federation's register while several ask
//     at once); a Blob held three steps is given up unconditionally at a
//     step divisible by three; the owner of a Blob updates it each step
//     (without contention, -lab-ownership=false: each federate updates the
//     Blob of its own instance and asks for none);
//   - regions that move: RadarContact is subscribed with a region on the
//     Band dimension that moves every fifth step, and sent, time-stamped,
//     with a region that moves each step;
//   - synchronization points: every tenth step the federate with the
//     lowest name it knows alive registers "lab-K" ("lab-K.rN" after N
//     restores: points are not restored, and their labels are unique);
//     every federate achieves each point announced to it.
//
// Refusals that races explain (an instance deleted meanwhile, an
// acquisition already pending) are counted, not failures. A service
// refused because a save or restore is under way is returned as it is
// (Extra): the step goes on from where it was (sub) once it ended.
//
// Its state (the instances known and held, the step and how far it got,
// its counts but those of synchronization points, which a restore does
// not take back) is saved and restored with the tick federate's.
type labWork struct {
	fed *peer.Federate
	cd  *codec.Codec

	aircraft              peer.ObjectClassHandle
	position, blob        peer.AttributeHandle
	contact               peer.InteractionClassHandle
	target                peer.ParameterHandle
	band                  peer.DimensionHandle
	subRegion, sendRegion peer.RegionHandle

	known []peer.ObjectInstanceHandle       // instances of Aircraft, in the order learned
	owned map[peer.ObjectInstanceHandle]int // Blobs held, and the step they were taken at
	names map[peer.FederateHandle]string    // members alive, by handle
	fixed bool                              // no contention: -lab-ownership=false
	cur   int                               // the step under way
	sub   int                               // how far it got: see step
	rests int                               // restores seen
	c     LabCounts
}

// LabCounts is what the lab workload did, in the tick result.
type LabCounts struct {
	Asked        int `json:"asked"`        // acquisitions asked for
	Acquired     int `json:"acquired"`     // AttributeOwnershipAcquisitionNotification
	Unavailable  int `json:"unavailable"`  // AttributeOwnershipUnavailable
	Released     int `json:"released"`     // given up when asked (divestiture if wanted)
	Divested     int `json:"divested"`     // given up unconditionally
	BlobsSent    int `json:"blobsSent"`    // Blob updates sent by its owner
	Refused      int `json:"refused"`      // services refused by a race (counted, not failed)
	ContactsSent int `json:"contactsSent"` // RadarContact interactions sent with a region
	Contacts     int `json:"contacts"`     // RadarContact interactions received
	Registered   int `json:"registered"`   // synchronization points registered
	Announced    int `json:"announced"`    // synchronization points announced (and achieved)
	Synchronized int `json:"synchronized"` // FederationSynchronized
}

// Add adds o's counts to c's: the workload of several processes.
func (c *LabCounts) Add(o LabCounts) {
	c.Asked += o.Asked
	c.Acquired += o.Acquired
	c.Unavailable += o.Unavailable
	c.Released += o.Released
	c.Divested += o.Divested
	c.BlobsSent += o.BlobsSent
	c.Refused += o.Refused
	c.ContactsSent += o.ContactsSent
	c.Contacts += o.Contacts
	c.Registered += o.Registered
	c.Announced += o.Announced
	c.Synchronized += o.Synchronized
}

func newLabWork(fed *peer.Federate) *labWork {
	return &labWork{fed: fed, owned: map[peer.ObjectInstanceHandle]int{}, names: map[peer.FederateHandle]string{fed.Handle(): fed.Name()}}
}

func (w *labWork) declare() error {
	fed := w.fed
	cd, err := codec.New(fed.FDD())
	if err != nil {
		return err
	}
	w.cd = cd
	var errs []error
	get := func(err error) { errs = append(errs, err) }
	w.aircraft, err = fed.GetObjectClassHandle("Aircraft")
	get(err)
	w.position, err = fed.GetAttributeHandle(w.aircraft, "Position")
	get(err)
	w.blob, err = fed.GetAttributeHandle(w.aircraft, "Blob")
	get(err)
	w.contact, err = fed.GetInteractionClassHandle("RadarContact")
	get(err)
	w.target, err = fed.GetParameterHandle(w.contact, "Target")
	get(err)
	w.band, err = fed.GetDimensionHandle("Band")
	get(err)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if w.subRegion, err = w.region(0); err != nil {
		return err
	}
	if w.sendRegion, err = w.region(0); err != nil {
		return err
	}
	return errors.Join(
		fed.PublishObjectClassAttributes(w.aircraft, w.position, w.blob),
		fed.SubscribeObjectClassAttributes(w.aircraft, w.position, w.blob),
		fed.PublishInteractionClass(w.contact),
		fed.SubscribeInteractionClassWithRegions(w.contact, w.subRegion),
	)
}

// region creates a region of the Band dimension at band b.
func (w *labWork) region(b uint64) (peer.RegionHandle, error) {
	r, err := w.fed.CreateRegion(w.band)
	if err != nil {
		return r, err
	}
	return r, w.move(r, b)
}

// move puts region r at band b (of three) and commits it.
func (w *labWork) move(r peer.RegionHandle, b uint64) error {
	if err := w.fed.SetRangeBounds(r, w.band, peer.RangeBounds{Lower: b % 3, Upper: b%3 + 1}); err != nil {
		return err
	}
	return w.fed.CommitRegionModifications(r)
}

func (w *labWork) handle(ev peer.Event) error {
	switch ev := ev.(type) {
	case peer.FederateJoined:
		w.names[ev.Federate] = ev.Name
	case peer.FederateLost:
		delete(w.names, ev.Federate)
	case peer.FederateResigned:
		delete(w.names, ev.Federate)
	case peer.DiscoverObjectInstance:
		if !slices.Contains(w.known, ev.Object) {
			w.known = append(w.known, ev.Object)
		}
		// Members that joined before this federate are known by their
		// instances.
		if n, err := w.fed.GetFederateName(ev.Producer); err == nil {
			w.names[ev.Producer] = n
		}
	case peer.RemoveObjectInstance:
		w.known = slices.DeleteFunc(w.known, func(o peer.ObjectInstanceHandle) bool { return o == ev.Object })
		delete(w.owned, ev.Object)
	case peer.AttributeOwnershipAcquisitionNotification:
		if slices.Contains(ev.Attributes, w.blob) {
			w.owned[ev.Object] = w.cur
			w.c.Acquired++
		}
	case peer.AttributeOwnershipUnavailable:
		w.c.Unavailable++
	case peer.RequestAttributeOwnershipRelease:
		given, err := w.fed.AttributeOwnershipDivestitureIfWanted(ev.Object, ev.Attributes...)
		if inProgress(err) {
			return err
		}
		if err != nil {
			w.c.Refused++
			return nil
		}
		if slices.Contains(given, w.blob) {
			delete(w.owned, ev.Object)
			w.c.Released++
		}
	case peer.ReceiveInteraction:
		if ev.Class == w.contact {
			w.c.Contacts++
		}
	case peer.AnnounceSynchronizationPoint:
		err := w.fed.SynchronizationPointAchieved(ev.Label, true)
		if inProgress(err) {
			return err // announced again once the save or restore ended
		}
		w.c.Announced++
		if errors.Is(err, peer.ErrSynchronizationPointLabelNotAnnounced) {
			// A federate that joined after the point was registered is
			// announced it but not waited for: the federation may have
			// synchronized already (docs/limits.md, "A joiner during the
			// decision").
			w.c.Refused++
			return nil
		}
		if err != nil {
			return fmt.Errorf("achieve %s: %w", ev.Label, err)
		}
	case peer.FederationSynchronized:
		w.c.Synchronized++
	}
	return nil
}

// step does the workload's part of step k, in four parts: ownership,
// regions, the radar contact, the synchronization point. Called again
// for the same step (a part was refused by a save or restore under
// way), it goes on with the part it was refused at.
func (w *labWork) step(k int, own peer.ObjectInstanceHandle) error {
	if w.cur != k {
		w.cur, w.sub = k, 0
	}
	if !slices.Contains(w.known, own) {
		// The registrar holds what it publishes from the start.
		w.known = append(w.known, own)
		w.owned[own] = k
	}
	parts := []func(k int) error{w.ownership, w.regions, w.radar, w.synchronize}
	for ; w.sub < len(parts); w.sub++ {
		if err := parts[w.sub](k); err != nil {
			return err
		}
	}
	return nil
}

// ownership gives up what was held long enough, updates the rest, and
// asks for the step's target.
func (w *labWork) ownership(k int) error {
	for _, obj := range slices.SortedFunc(maps.Keys(w.owned), compareObjects) {
		since := w.owned[obj]
		if k%3 == 0 && k-since >= 3 && !w.fixed {
			err := w.fed.UnconditionalAttributeOwnershipDivestiture(obj, w.blob)
			if inProgress(err) {
				return err
			}
			if err != nil {
				w.c.Refused++
			} else {
				w.c.Divested++
			}
			delete(w.owned, obj)
			continue
		}
		v, err := w.cd.Encode("HLAopaqueData", []byte(fmt.Sprintf("%s/%d", w.fed.Name(), k)))
		if err != nil {
			return err
		}
		err = w.fed.UpdateAttributeValues(obj, peer.AttributeValues{w.blob: v}, nil)
		if inProgress(err) {
			return err
		}
		if err != nil {
			w.c.Refused++ // divested or deleted meanwhile
			delete(w.owned, obj)
			continue
		}
		w.c.BlobsSent++
	}
	if len(w.known) > 0 && !w.fixed {
		target := w.known[k%len(w.known)]
		if _, held := w.owned[target]; !held {
			var err error
			if k%2 == 1 {
				err = w.fed.AttributeOwnershipAcquisition(target, []byte(w.fed.Name()), w.blob)
			} else {
				err = w.fed.AttributeOwnershipAcquisitionIfAvailable(target, w.blob)
			}
			switch {
			case inProgress(err):
				return err
			case err != nil:
				w.c.Refused++
			default:
				w.c.Asked++
			}
		}
	}
	return nil
}

// regions moves the subscription every fifth step, the sender's region
// every step.
func (w *labWork) regions(k int) error {
	if k%5 == 0 {
		if err := w.move(w.subRegion, uint64(k/5)); err != nil {
			return err
		}
	}
	return w.move(w.sendRegion, uint64(k))
}

// radar sends the step's RadarContact, time-stamped, with the sender's
// region.
func (w *labWork) radar(k int) error {
	v, err := w.cd.Encode("HLAunicodeString", fmt.Sprintf("%s/%d", w.fed.Name(), k))
	if err != nil {
		return err
	}
	if _, err := w.fed.SendInteractionWithRegionsAndTime(w.contact, peer.ParameterValues{w.target: v}, []peer.RegionHandle{w.sendRegion}, nil, peer.Float64Time(float64(k))); err != nil {
		if inProgress(err) {
			return err
		}
		return fmt.Errorf("radar contact: %w", err)
	}
	w.c.ContactsSent++
	return nil
}

// synchronize registers a point every tenth step, when this federate's
// name is the lowest alive.
func (w *labWork) synchronize(k int) error {
	if k%10 != 0 || !w.lowest() {
		return nil
	}
	label := fmt.Sprintf("lab-%d", k)
	if w.rests > 0 {
		label = fmt.Sprintf("lab-%d.r%d", k, w.rests)
	}
	if err := w.fed.RegisterFederationSynchronizationPoint(label, nil); err != nil {
		if inProgress(err) {
			return err
		}
		return fmt.Errorf("register %s: %w", label, err)
	}
	w.c.Registered++
	return nil
}

// compareObjects orders instance handles (registrar, then serial).
func compareObjects(a, b peer.ObjectInstanceHandle) int {
	if a.Federate != b.Federate {
		return cmp.Compare(a.Federate, b.Federate)
	}
	return cmp.Compare(a.Serial, b.Serial)
}

// lowest reports whether this federate's name is the lowest of the
// members it knows alive.
func (w *labWork) lowest() bool {
	for _, n := range w.names {
		if n < w.fed.Name() {
			return false
		}
	}
	return true
}

func (w *labWork) result(res *Result) {
	c := w.c
	res.Lab = &c
}

// labState is the lab workload's saved state.
type labState struct {
	Known  []peer.ObjectInstanceHandle `json:"known"`
	Owned  []labHeld                   `json:"owned"`
	Cur    int                         `json:"cur"`
	Sub    int                         `json:"sub"`
	Counts LabCounts                   `json:"counts"`
}

// labHeld is a Blob held, and the step it was taken at.
type labHeld struct {
	Object peer.ObjectInstanceHandle `json:"object"`
	Since  int                       `json:"since"`
}

func (w *labWork) save() (json.RawMessage, error) {
	s := labState{Known: w.known, Cur: w.cur, Sub: w.sub, Counts: w.c}
	for _, obj := range slices.SortedFunc(maps.Keys(w.owned), compareObjects) {
		s.Owned = append(s.Owned, labHeld{obj, w.owned[obj]})
	}
	return json.Marshal(s)
}

// restore goes back to a saved state; the counts of synchronization
// points stay (points are not restored).
func (w *labWork) restore(b json.RawMessage) error {
	var s labState
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	w.known, w.cur, w.sub = s.Known, s.Cur, s.Sub
	w.owned = map[peer.ObjectInstanceHandle]int{}
	for _, h := range s.Owned {
		w.owned[h.Object] = h.Since
	}
	c := s.Counts
	c.Registered, c.Announced, c.Synchronized = w.c.Registered, w.c.Announced, w.c.Synchronized
	w.c = c
	w.rests++
	return nil
}

// NewLab is the lab's work for fed: ownership contention (none with
// fixedOwnership: each federate updates its own Blob only), moving
// regions and synchronization points.
func NewLab(fed *peer.Federate, fixedOwnership bool) Extra {
	w := newLabWork(fed)
	w.fixed = fixedOwnership
	return w
}
