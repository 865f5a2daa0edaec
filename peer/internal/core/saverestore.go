package core

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/reliable"
)

// Federation save and restore (IEEE 1516.1-2010 §4.16-§4.32), decided
// through the control plane like synchronization points
// (docs/saverestore.md):
//
//   - One save or restore at a time: the requester takes the register key
//     "saverestore"; its version names the save or restore, and orders
//     restores (the restore branch, below).
//   - The requester publishes the save ("sv": version, label, time) or
//     the restore ("rr": version, label) in its replicated state. Every
//     federate publishes how far it got ("ss" and "rs": version, status;
//     a save status also carries the federate's send positions). One
//     federate decides, as for synchronization points (the requester, or
//     the live federate with the lowest handle once it is gone), and
//     publishes the outcome ("sd", "rd" to begin a restore, "rf").
//   - Save: a federate is told to save (InitiateFederateSave) when it is
//     not advancing and, for a timed save, its logical time has reached
//     the save time. From then on services are refused (SaveInProgress)
//     and what arrives is held, not acted on. Its RTI state is captured
//     once it has received everything every other federate sent before
//     it was told to save (their published send positions): no message
//     is in flight across the cut. The capture, with the held messages,
//     is written at FederateSaveComplete (Config.Saves).
//   - Restore: every federate reads its saved state; when all have it,
//     each replaces its RTI state with it and moves to the restore's
//     branch. Every data-plane message carries its sender's branch:
//     what an older branch sent is dropped, what a newer one sent is held
//     until this federate restores too. Nothing sent on the abandoned
//     branch is delivered after the restore.

// Save statuses ("ss").
const (
	ssInitiated   = 1
	ssBegun       = 2
	ssComplete    = 3
	ssNotComplete = 4 // FederateSaveNotComplete
	ssUnable      = 5 // the RTI could not write its state
	ssTooLate     = 6 // the federate was past the save time
	ssAbort       = 7 // AbortFederationSave
)

// Restore statuses ("rs").
const (
	rsReady       = 1 // has the saved state
	rsMissing     = 2 // does not
	rsComplete    = 3
	rsNotComplete = 4
	rsAbort       = 5
)

type savePhase uint8

const (
	saveIdle      savePhase = iota
	savePending             // announced; this federate is not told yet
	saveInitiated           // InitiateFederateSave delivered
	saveBegun               // FederateSaveBegun
	saveDone                // FederateSaveComplete or NotComplete
)

type restorePhase uint8

const (
	restoreIdle    restorePhase = iota
	restorePending              // requested; waiting for every federate's answer
	restoreBegun                // the state is restored; the federate restores its own
	restoreDone                 // FederateRestoreComplete or NotComplete
)

// SaveStore keeps a federate's saved RTI state by label (Config.Saves).
// A save is written pending and becomes the label's state only when the
// federation saved: a failed save leaves an earlier one of the label in
// place, and nothing to restore from otherwise.
type SaveStore interface {
	// WriteSave writes data, this federate's state, pending, for label,
	// and set, the saved set (the same in every federate of the save).
	WriteSave(label string, data, set []byte) error
	// EndSave makes the pending state of label the label's (saved) or
	// drops it.
	EndSave(label string, saved bool)
	// ReadSave reads the state saved under label by the federate named
	// name (this one's, or the one it restores as).
	ReadSave(label, name string) ([]byte, error)
	// ReadSet reads the saved set of label.
	ReadSet(label string) ([]byte, error)
}

// restoreAs is the saved federate a federate restores as.
type restoreAs struct {
	name   string
	handle FederateHandle
}

// memberSave is another federate's save status and send positions.
type memberSave struct {
	status uint8
	pos    []groupSeq
}

// saveRestore is the save and restore sub-machine.
type saveRestore struct {
	branch    uint64              // restores gone through (the key version of the last)
	restoring bool                // the saved deliveries are being acted on again (applySnapshot)
	future    []reliable.Delivery // from a newer branch, until this federate restores

	save       saveUnderWay    // the save under way (version 0: none)
	restore    restoreUnderWay // the restore under way (version 0: none)
	restoredAs string          // the saved name this federate restored as last (RestoredName)
	// The newest save and restore versions seen (an older keySave or
	// keyRestore is ignored).
	seenSave, seenRestore uint64

	ticks int64     // Ticks so far
	retry []retryAt // requests to make again, by tick
}

// saveUnderWay is a federation save this federate takes part in.
type saveUnderWay struct {
	version   uint64         // the register key's version the requester took: it names the save
	requester FederateHandle // who asked for it (and decides it while joined)
	label     string
	timed     bool    // a save at a logical time,
	at        float64 // this one
	phase     savePhase
	// saved is the saved set: the federates joined at the request, in
	// handle order, with their names and types, as the requester
	// announced them; those that take part.
	saved    []snapMember
	statuses map[FederateHandle]memberSave
	failed   hla.SaveFailureReason // a federate left during the save
	held     []reliable.Delivery   // deliveries held since InitiateFederateSave
	captured []byte                // the RTI state captured, once every sender's messages are in
	// writePending: FederateSaveComplete waits for the capture.
	writePending bool
	status       uint8      // this federate's status
	positions    []groupSeq // this federate's send positions at initiation
}

// restoreUnderWay is a federation restore this federate takes part in.
type restoreUnderWay struct {
	version   uint64
	requester FederateHandle
	label     string
	phase     restorePhase
	parts     []FederateHandle // the federates joined at the request, sorted: those that take part
	snapshot  *snapshot
	// assignment maps each joined federate to the saved federate it
	// restores as.
	assignment map[FederateHandle]restoreAs
	statuses   map[FederateHandle]uint8
	failed     hla.RestoreFailureReason
}

// SaveRestoreError returns the error a service of the other groups gets
// during a save (once this federate is told to save) or a restore (once
// it began), or nil.
func (c *Core) SaveRestoreError() error {
	switch {
	case c.saveRestore.save.phase >= saveInitiated:
		return hla.ErrSaveInProgress
	case c.saveRestore.restore.phase >= restoreBegun:
		return hla.ErrRestoreInProgress
	}
	return nil
}

// appendHandles writes a count and the handles (decodeHandles reads
// them).
func appendHandles(b []byte, hs []FederateHandle) []byte {
	b = binary.AppendUvarint(b, uint64(len(hs)))
	for _, h := range hs {
		b = binary.AppendUvarint(b, uint64(h))
	}
	return b
}

// ---- Save ----

// RequestFederationSave (§4.16) asks every federate to save under label:
// now, or with hasTime when each federate's logical time reaches t.
// Errors: ErrLogicalTimeAlreadyPassed, ErrInvalidLogicalTime,
// ErrFederateUnableToUseTime (timed; a federate neither regulating nor
// constrained), ErrSaveInProgress (a save initiated already),
// ErrRestoreInProgress. A request while a save is requested but not yet
// initiated (no federate was told to save: a timed save not reached
// yet) replaces it. A request that meets another federate's save under
// way joins it.
func (c *Core) RequestFederationSave(label string, hasTime bool, t LogicalTime) error {
	if err := c.check(); err != nil {
		return err
	}
	if c.saveRestore.save.phase != saveIdle && !c.saveReplaceable() {
		return hla.ErrSaveInProgress
	}
	if c.saveRestore.restore.phase != restoreIdle {
		return hla.ErrRestoreInProgress
	}
	var at float64
	if hasTime {
		v, err := c.timeKind.Value(t)
		if err != nil {
			return err
		}
		if !c.timeCore.Regulating() && !c.timeCore.Constrained() {
			return fmt.Errorf("%w: a timed save needs time regulation or constraint", hla.ErrFederateUnableToUseTime)
		}
		if v < c.timeCore.Time() {
			return fmt.Errorf("%w: save time %v, logical time %v", hla.ErrLogicalTimeAlreadyPassed, v, c.timeCore.Time())
		}
		at = v
	}
	if c.saveRestore.save.phase != saveIdle {
		c.replaceSave(label, hasTime, at, 0)
		return nil
	}
	c.requestSave(label, hasTime, at, 0)
	return nil
}

// SaveUnderWay returns the label of the save this federate takes part
// in, requested or initiated, or "".
func (c *Core) SaveUnderWay() string { return c.saveRestore.save.label }

// saveReplaceable reports whether the save under way is requested but
// not initiated anywhere, as far as this federate knows: a new request
// replaces it (§4.16).
func (c *Core) saveReplaceable() bool {
	return c.saveRestore.save.phase == savePending && len(c.saveRestore.save.statuses) == 0
}

// replaceSave replaces the pending save with a new one: it takes the
// register key from the pending save's version to the next (a
// compare-and-set, so that of racing replacements one wins) and
// announces the new save; every federate drops the pending one for it
// (saveAnnounced). When the key moved on meanwhile it asks again while
// the save stays replaceable, or makes an ordinary request once no save
// is under way; otherwise the request fails (FederationNotSaved,
// RTIUnableToSave).
func (c *Core) replaceSave(label string, hasTime bool, at float64, tries int) {
	c.startOp(Op{Kind: OpSwap, Key: registerSaveRestore, Expect: c.saveRestore.save.version, Value: []byte(label)}, func(r OpResult) {
		if r.Err == nil && r.Held {
			c.announceSave(r.Version, label, hasTime, at)
			return
		}
		if tries < saveRestoreRetries && c.federation.joined() {
			c.saveRestore.retry = append(c.saveRestore.retry, retryAt{at: c.saveRestore.ticks + saveRestoreRetryTicks, run: func() {
				switch {
				case c.saveRestore.save.phase == saveIdle && c.saveRestore.restore.phase == restoreIdle:
					c.requestSave(label, hasTime, at, tries+1)
				case c.saveReplaceable():
					c.replaceSave(label, hasTime, at, tries+1)
				default:
					c.push(hla.FederationNotSaved{Reason: hla.RTIUnableToSave})
				}
			}})
			return
		}
		c.push(hla.FederationNotSaved{Reason: hla.RTIUnableToSave})
	})
}

// announceSave publishes the save this federate took the register key
// for, at version, and takes part in it.
func (c *Core) announceSave(version uint64, label string, hasTime bool, at float64) {
	if c.saveRestore.save.phase != saveIdle && version > c.saveRestore.save.version {
		c.saveReplaced() // before the announcement: it clears this federate's own
	}
	// The saved set is the requester's view of the federation: every
	// federate of the save records the same one, names and types too,
	// even one that has not yet heard of every member's join.
	saved := c.membersOf(c.federation.everyone(c.self))
	b := binary.AppendUvarint(nil, version)
	b = appendString(b, label)
	b = append(b, boolByte(hasTime))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(at))
	b = appendHandles(b, handlesOf(saved))
	for _, m := range saved {
		b = appendString(b, m.Name)
		b = appendString(b, m.Type)
	}
	c.setState(keySave, b)
	c.saveAnnounced(c.self, version, label, hasTime, at, saved)
}

// saveRestoreRetries bounds how often a save or restore request asks for the
// register key again while another save or restore holds it, and
// saveRestoreRetryTicks is the wait between asks.
const (
	saveRestoreRetries    = 50
	saveRestoreRetryTicks = 5
)

// requestSave takes the register key for a save and announces it. While
// another save or restore holds the key (it may just be releasing it),
// it asks again, saveRestoreRetries times; a save announced meanwhile is the one
// this federate takes part in (it raced with this request, which the
// register ordered after it), and a key that stays held fails the
// request (FederationNotSaved, RTIUnableToSave).
func (c *Core) requestSave(label string, hasTime bool, at float64, tries int) {
	c.startOp(Op{Kind: OpAcquire, Key: registerSaveRestore, Value: []byte(label)}, func(r OpResult) {
		if r.Err == nil && r.Held {
			c.announceSave(r.Version, label, hasTime, at)
			return
		}
		switch {
		case c.saveRestore.save.phase != saveIdle:
			// Another federate's save is under way: this federate takes
			// part in it.
		case tries < saveRestoreRetries && c.federation.joined():
			c.saveRestore.retry = append(c.saveRestore.retry, retryAt{at: c.saveRestore.ticks + saveRestoreRetryTicks, run: func() {
				if c.saveRestore.save.phase == saveIdle && c.saveRestore.restore.phase == restoreIdle {
					c.requestSave(label, hasTime, at, tries+1)
				}
			}})
		default:
			c.push(hla.FederationNotSaved{Reason: hla.RTIUnableToSave})
		}
	})
}

// retryAt is a request to make again at tick at.
type retryAt struct {
	at  int64
	run func()
}

// tickSaveRestore runs the requests due.
func (c *Core) tickSaveRestore() {
	c.saveRestore.ticks++
	if len(c.saveRestore.retry) == 0 || c.saveRestore.retry[0].at > c.saveRestore.ticks {
		return
	}
	due := c.saveRestore.retry
	c.saveRestore.retry = nil
	for _, r := range due {
		if r.at > c.saveRestore.ticks {
			c.saveRestore.retry = append(c.saveRestore.retry, r)
			continue
		}
		r.run()
	}
}

// saveAnnounced takes a save: this federate is told to save now or,
// timed, once its time reaches at. A federate that joined after the
// request (not in parts) takes no part in it.
func (c *Core) saveAnnounced(coord FederateHandle, version uint64, label string, hasTime bool, at float64, saved []snapMember) {
	parts := handlesOf(saved)
	if version <= c.saveRestore.seenSave || !c.federation.joined() {
		return
	}
	c.saveRestore.seenSave = version
	if !slices.Contains(parts, c.self) {
		return
	}
	if c.saveRestore.save.phase != saveIdle {
		// A newer save replaces the one under way: the register let it
		// in only by replacing the key's version (replaceSave).
		c.saveReplaced()
	}
	c.saveRestore.save.version, c.saveRestore.save.requester, c.saveRestore.save.label, c.saveRestore.save.timed, c.saveRestore.save.at = version, coord, label, hasTime, at
	c.saveRestore.save.saved = saved
	c.saveRestore.save.phase = savePending
	c.saveRestore.save.statuses = make(map[FederateHandle]memberSave)
	c.saveRestore.save.failed = 0
	// Statuses that came before the save did.
	c.federation.eachState(keySaveStatus, func(f FederateHandle, v []byte) { c.noteSaveStatus(f, v) })
	c.saveMaybeInitiate()
	c.saveCheck()
}

// saveReplaced drops the save under way for a newer one. A federate
// still waiting to be told (the common case: the save was replaced
// because nobody was told yet) hears nothing of it. One that was told
// already (it raced with the replacement) ends it as not saved
// (SaveAborted), and acts on what it held.
func (c *Core) saveReplaced() {
	initiated := c.saveRestore.save.phase >= saveInitiated
	if c.cfg.Saves != nil && c.saveRestore.save.status != 0 {
		c.cfg.Saves.EndSave(c.saveRestore.save.label, false)
	}
	if initiated {
		c.push(hla.FederationNotSaved{Reason: hla.SaveAborted})
	}
	if c.saveRestore.save.requester == c.self {
		c.setState(keySave, nil) // its key went to the newer save
	}
	held := c.saveRestore.save.held
	c.saveRestore.endSave()
	c.setState(keySaveStatus, nil)
	for _, d := range held {
		c.handle(d, true)
	}
}

// saveMaybeInitiate tells this federate to save once it may: it is not
// advancing and, for a timed save, its time reached the save time (a
// federate that uses no time is told at once).
func (c *Core) saveMaybeInitiate() {
	if c.saveRestore.save.phase != savePending {
		return
	}
	usesTime := c.timeCore.Regulating() || c.timeCore.Constrained()
	if !c.timeCore.Quiet() {
		if c.saveRestore.save.timed && usesTime && c.saveOutrun() {
			// Its advance cannot stop at the save time any more, and
			// the federates that reached it hold time there while
			// they save: waiting would be waiting for itself.
			c.saveRestore.save.phase = saveDone
			c.publishSaveStatus(ssTooLate)
			c.saveCheck()
		}
		return
	}
	if c.saveRestore.save.timed && usesTime {
		switch now := c.timeCore.Time(); {
		case now > c.saveRestore.save.at:
			c.saveRestore.save.phase = saveDone
			c.publishSaveStatus(ssTooLate)
			c.saveCheck()
			return
		case now < c.saveRestore.save.at:
			return
		}
	}
	c.saveRestore.save.phase = saveInitiated
	c.saveRestore.save.positions = c.sendPositions()
	ev := hla.InitiateFederateSave{Label: c.saveRestore.save.label}
	if c.saveRestore.save.timed {
		ev.Time, ev.HasTime = c.timeKind.Make(c.saveRestore.save.at), true
	}
	c.queueEndingAt(ev, unseenSave)
	if c.tracer != nil {
		c.traceSave(c.saveRestore.save.label)
	}
	c.publishSaveStatus(ssInitiated)
	c.saveMaybeCapture()
}

// saveOutrun reports whether the time advance pending goes past the
// timed save's time without stopping there: the federate asked for a
// time past it, at it already (any grant is later), or with a time
// advance request (TAR, TARA: granted at the time asked for only).
// Then the save cannot be initiated at its time (docs/saverestore.md).
func (c *Core) saveOutrun() bool {
	kind, t := c.timeCore.Pending()
	switch {
	case kind == lbts.NoRequest || t <= c.saveRestore.save.at:
		return false
	case c.timeCore.Time() >= c.saveRestore.save.at:
		return true
	}
	return kind == lbts.TimeAdvanceRequest || kind == lbts.TimeAdvanceRequestAvailable
}

// publishSaveStatus publishes this federate's save status (with its send
// positions).
func (c *Core) publishSaveStatus(status uint8) {
	c.saveRestore.save.status = status
	b := binary.AppendUvarint(nil, c.saveRestore.save.version)
	b = append(b, status)
	b = appendPositions(b, c.saveRestore.save.positions)
	c.setState(keySaveStatus, b)
}

// noteSaveStatus records federate f's save status from its state value.
func (c *Core) noteSaveStatus(f FederateHandle, value []byte) {
	version, st, ok := decodeSaveStatus(value)
	if !ok {
		c.stats.Malformed++
		return
	}
	c.saveRestore.save.noteStatus(f, version, st)
}

// decodeSaveStatus decodes a federate's keySaveStatus; false for bytes
// that do not parse.
func decodeSaveStatus(value []byte) (version uint64, st memberSave, ok bool) {
	r := wireReader{b: value}
	version = r.uvarint("version")
	status := r.byte("status")
	pos := readPositions(&r)
	if r.err != nil || len(r.b) != 0 || status < ssInitiated || status > ssAbort {
		return 0, st, false
	}
	return version, memberSave{status: status, pos: pos}, true
}

// noteStatus records federate f's status in the save version names; a
// status of another save is ignored.
func (s *saveUnderWay) noteStatus(f FederateHandle, version uint64, st memberSave) {
	if version != s.version || s.phase == saveIdle {
		return
	}
	s.statuses[f] = st
}

// saveMaybeCapture captures this federate's RTI state once it has
// received everything the others sent before they were told to save.
func (c *Core) saveMaybeCapture() {
	if c.saveRestore.save.phase < saveInitiated || c.saveRestore.save.captured != nil || c.saveRestore.save.status == ssTooLate {
		return
	}
	for _, m := range c.saveRestore.save.saved {
		f := FederateHandle(m.Handle)
		if c.notSeenYet(f) {
			return // its messages sent before the save are owed here too
		}
		if f == c.self || !c.federation.isMember(f) {
			continue // gone: the save fails
		}
		ms, ok := c.saveRestore.save.statuses[f]
		if !ok {
			return // not told yet
		}
		if ms.status == ssTooLate || ms.status == ssAbort {
			return // the save fails anyway
		}
		if !c.receivedThrough(f, ms.pos) {
			return
		}
	}
	snap, err := c.captureSnapshot()
	if err != nil {
		c.saveRestore.save.captured = []byte{} // captured, unusable: the write reports it
		c.saveRestore.save.phase = max(c.saveRestore.save.phase, saveBegun)
		c.publishSaveStatus(ssUnable)
		c.saveCheck()
		return
	}
	c.saveRestore.save.captured = snap
	if c.saveRestore.save.writePending {
		c.saveWrite()
	}
}

// FederateSaveBegun (§4.18): the federate starts saving. Errors:
// ErrSaveNotInitiated.
func (c *Core) FederateSaveBegun() error {
	if err := c.check(); err != nil {
		return err
	}
	if c.saveRestore.save.phase != saveInitiated {
		return hla.ErrSaveNotInitiated
	}
	if c.unseenHas(unseenSave) {
		return notYetEnabled(hla.ErrSaveNotInitiated, "InitiateFederateSave")
	}
	c.saveRestore.save.phase = saveBegun
	c.publishSaveStatus(ssBegun)
	return nil
}

// FederateSaveComplete (§4.19) reports this federate's save: the RTI
// writes its own state (once it has captured it) and reports the
// federate saved, or, with ok false (FederateSaveNotComplete), not.
// Errors: ErrFederateHasNotBegunSave.
func (c *Core) FederateSaveComplete(ok bool) error {
	if err := c.check(); err != nil {
		return err
	}
	if c.saveRestore.save.phase != saveBegun || c.saveRestore.save.writePending {
		return hla.ErrFederateHasNotBegunSave
	}
	if !ok {
		c.saveRestore.save.phase = saveDone
		c.publishSaveStatus(ssNotComplete)
		c.saveCheck()
		return nil
	}
	c.saveRestore.save.writePending = true
	if c.saveRestore.save.captured != nil {
		c.saveWrite()
	}
	return nil
}

// saveWrite writes the captured state and reports the outcome.
func (c *Core) saveWrite() {
	c.saveRestore.save.writePending = false
	c.saveRestore.save.phase = saveDone
	status := uint8(ssComplete)
	switch {
	case c.cfg.Saves == nil, len(c.saveRestore.save.captured) == 0:
		status = ssUnable
	default:
		if err := c.cfg.Saves.WriteSave(c.saveRestore.save.label, c.saveRestore.save.captured, c.encodeSavedSet()); err != nil {
			status = ssUnable
		}
	}
	c.publishSaveStatus(status)
	c.saveCheck()
}

// AbortFederationSave (§4.21) ends the save under way without saving.
// Errors: ErrSaveNotInProgress.
func (c *Core) AbortFederationSave() error {
	if err := c.check(); err != nil {
		return err
	}
	if c.saveRestore.save.phase == saveIdle {
		return hla.ErrSaveNotInProgress
	}
	c.publishSaveStatus(ssAbort)
	c.saveCheck()
	return nil
}

// QueryFederationSaveStatus (§4.22): FederationSaveStatusResponse tells
// each federate's status.
func (c *Core) QueryFederationSaveStatus() error {
	if err := c.check(); err != nil {
		return err
	}
	status := func(f FederateHandle) hla.SaveStatus {
		if c.saveRestore.save.phase == saveIdle {
			return hla.FederateSaveNotInitiated
		}
		st := c.saveRestore.save.status
		if f != c.self {
			st = c.saveRestore.save.statuses[f].status
		}
		switch st {
		case 0:
			return hla.FederateSaveNotInitiated
		case ssInitiated:
			return hla.FederateWaitingForSaveToBegin
		case ssBegun:
			return hla.FederateSaving
		}
		return hla.FederateWaitingForFederationToSave
	}
	out := []hla.FederateHandleSaveStatusPair{{Federate: c.self, Status: status(c.self)}}
	for f := range c.federation.members {
		out = append(out, hla.FederateHandleSaveStatusPair{Federate: f, Status: status(f)})
	}
	slices.SortFunc(out, func(a, b hla.FederateHandleSaveStatusPair) int { return compareUint(a.Federate, b.Federate) })
	c.push(hla.FederationSaveStatusResponse{Statuses: out})
	return nil
}

// saveCheck decides the save when this federate decides it and every
// live federate finished (or one aborted, or one left).
func (c *Core) saveCheck() {
	sv := &c.saveRestore.save
	parts := handlesOf(sv.saved)
	if sv.phase == saveIdle || !c.federation.decides(c.self, sv.requester, parts) {
		return
	}
	reason, done := sv.outcome(c.federation.liveOf(parts))
	if !done {
		return
	}
	b := binary.AppendUvarint(nil, sv.version)
	b = append(b, byte(reason))
	c.setState(keySaveOutcome, b)
	c.saveDecided(sv.version, reason)
}

// outcome decides the save from this federate's status and those of the
// federates of live, the participants still joined: done is false while
// it must wait for one of them; reason 0 is saved.
func (s *saveUnderWay) outcome(live []FederateHandle) (reason hla.SaveFailureReason, done bool) {
	reason = s.failed
	final := func(st uint8) bool { return st >= ssComplete }
	statuses := []uint8{s.status}
	for _, f := range live {
		statuses = append(statuses, s.statuses[f].status)
	}
	switch {
	case slices.Contains(statuses, ssAbort):
		reason = hla.SaveAborted
	case slices.Contains(statuses, ssTooLate):
		reason = hla.SaveTimeCannotBeHonored // no need to wait for the others
	}
	if reason == 0 {
		for _, st := range statuses {
			if !final(st) {
				return 0, false
			}
		}
		switch {
		case slices.Contains(statuses, ssTooLate):
			reason = hla.SaveTimeCannotBeHonored
		case slices.Contains(statuses, ssUnable):
			reason = hla.RTIUnableToSave
		case slices.Contains(statuses, ssNotComplete):
			reason = hla.FederateReportedFailureDuringSave
		}
	}
	return reason, true
}

// saveDecided ends the save: FederationSaved or NotSaved, the held
// deliveries are acted on, the states and the key go.
func (c *Core) saveDecided(version uint64, reason hla.SaveFailureReason) {
	if version != c.saveRestore.save.version || c.saveRestore.save.phase == saveIdle {
		return
	}
	if c.cfg.Saves != nil && c.saveRestore.save.status != 0 {
		c.cfg.Saves.EndSave(c.saveRestore.save.label, reason == 0)
	}
	if reason == 0 {
		c.push(hla.FederationSaved{})
		c.mom.lastSave, c.mom.lastSaveAt, c.mom.lastSaveTimed = c.saveRestore.save.label, c.saveRestore.save.at, c.saveRestore.save.timed
	} else {
		c.push(hla.FederationNotSaved{Reason: reason})
	}
	coord := c.saveRestore.save.requester
	held := c.saveRestore.save.held
	c.saveRestore.endSave()
	c.setState(keySaveStatus, nil)
	if coord == c.self {
		// (A requester that is gone has its key freed with it.)
		c.setState(keySave, nil)
		c.startOp(Op{Kind: OpRelease, Key: registerSaveRestore}, func(OpResult) {})
	}
	for _, d := range held {
		c.handle(d, true)
	}
}

// endSave forgets the save under way.
func (s *saveRestore) endSave() { s.save = saveUnderWay{} }

// ---- Restore ----

// RequestFederationRestore (§4.24) asks the federation to go back to the
// state saved under label: RequestFederationRestoreSucceeded or Failed
// follows. Errors: ErrSaveInProgress, ErrRestoreInProgress.
func (c *Core) RequestFederationRestore(label string) error {
	if err := c.check(); err != nil {
		return err
	}
	if c.saveRestore.save.phase != saveIdle {
		return hla.ErrSaveInProgress
	}
	if c.saveRestore.restore.phase != restoreIdle {
		return hla.ErrRestoreInProgress
	}
	c.requestRestore(label, 0)
	return nil
}

// requestRestore takes the register key for a restore and announces it,
// asking again while another save or restore holds the key, as
// requestSave does; RequestFederationRestoreFailed when it stays held.
// The announcement assigns every joined federate the saved federate it
// restores as (restoreAssign); when the joined federates' types do not
// match the saved set's, or there is no saved set, the request fails.
func (c *Core) requestRestore(label string, tries int) {
	c.startOp(Op{Kind: OpAcquire, Key: registerSaveRestore, Value: []byte(label)}, func(r OpResult) {
		if r.Err == nil && r.Held {
			parts := c.federation.everyone(c.self)
			as, err := c.restoreAssign(label, parts)
			if err != nil {
				c.push(hla.RequestFederationRestoreFailed{Label: label})
				c.startOp(Op{Kind: OpRelease, Key: registerSaveRestore}, func(OpResult) {})
				return
			}
			b := binary.AppendUvarint(nil, r.Version)
			b = appendString(b, label)
			b = appendHandles(b, parts)
			for _, f := range parts {
				b = binary.AppendUvarint(b, uint64(as[f].handle))
				b = appendString(b, as[f].name)
			}
			c.setState(keyRestore, b)
			c.restoreAnnounced(c.self, r.Version, label, parts, as)
			return
		}
		if tries < saveRestoreRetries && c.federation.joined() {
			c.saveRestore.retry = append(c.saveRestore.retry, retryAt{at: c.saveRestore.ticks + saveRestoreRetryTicks, run: func() {
				if c.saveRestore.save.phase == saveIdle && c.saveRestore.restore.phase == restoreIdle {
					c.requestRestore(label, tries+1)
				} else {
					c.push(hla.RequestFederationRestoreFailed{Label: label})
				}
			}})
			return
		}
		c.push(hla.RequestFederationRestoreFailed{Label: label})
	})
}

// restoreAnnounced takes a restore request: this federate reads its
// saved state and says whether it has it. A federate that joined after
// the request takes no part in it (it was not in the federation the
// request is about, and the saved federation's members are checked).
func (c *Core) restoreAnnounced(coord FederateHandle, version uint64, label string, parts []FederateHandle, as map[FederateHandle]restoreAs) {
	if version <= c.saveRestore.seenRestore || !c.federation.joined() {
		return
	}
	c.saveRestore.seenRestore = version
	if !slices.Contains(parts, c.self) {
		return
	}
	if c.saveRestore.restore.phase != restoreIdle {
		return
	}
	c.saveRestore.restore.version, c.saveRestore.restore.requester, c.saveRestore.restore.label, c.saveRestore.restore.phase = version, coord, label, restorePending
	c.saveRestore.restore.parts = parts
	c.saveRestore.restore.statuses = make(map[FederateHandle]uint8)
	c.saveRestore.restore.failed = 0
	c.saveRestore.restore.snapshot = nil
	c.saveRestore.restore.assignment = as
	var saved []FederateHandle
	for _, a := range as {
		saved = append(saved, a.handle)
	}
	slices.Sort(saved)
	status := uint8(rsMissing)
	if me, ok := as[c.self]; ok && c.cfg.Saves != nil {
		if b, err := c.cfg.Saves.ReadSave(label, me.name); err == nil {
			if s, err := decodeSnapshot(b); err == nil && c.snapshotFits(s, label, me, saved) == nil {
				c.saveRestore.restore.snapshot, status = s, rsReady
			}
		}
	}
	c.federation.eachState(keyRestoreStatus, func(f FederateHandle, v []byte) { c.noteRestoreStatus(f, v) })
	c.publishRestoreStatus(status)
	c.restoreCheck()
}

func (c *Core) publishRestoreStatus(status uint8) {
	c.saveRestore.restore.statuses[c.self] = status
	b := binary.AppendUvarint(nil, c.saveRestore.restore.version)
	c.setState(keyRestoreStatus, append(b, status))
}

func (c *Core) noteRestoreStatus(f FederateHandle, value []byte) {
	r := wireReader{b: value}
	version := r.uvarint("version")
	status := r.byte("status")
	if r.err != nil || len(r.b) != 0 || status < rsReady || status > rsAbort {
		c.stats.Malformed++
		return
	}
	c.saveRestore.restore.noteStatus(f, version, status)
}

// noteStatus records federate f's status in the restore version names;
// a status of another restore is ignored.
func (r *restoreUnderWay) noteStatus(f FederateHandle, version uint64, status uint8) {
	if version != r.version || r.phase == restoreIdle {
		return
	}
	r.statuses[f] = status
}

// restoreCheck decides the restore when this federate decides it: to
// begin once every federate has its state (or to refuse), then the
// outcome once every federate restored.
func (c *Core) restoreCheck() {
	rs := &c.saveRestore.restore
	if rs.phase == restoreIdle || !c.federation.decides(c.self, rs.requester, rs.parts) {
		return
	}
	live := c.federation.liveOf(rs.parts)
	if rs.phase == restorePending {
		if begins, done := rs.begins(c.self, live); done {
			c.restoreGo(begins)
		}
		return
	}
	reason, done := rs.outcome(c.self, live)
	if !done {
		return
	}
	b := binary.AppendUvarint(nil, rs.version)
	c.setState(keyRestoreOutcome, append(b, byte(reason)))
	c.restoreDecided(rs.version, reason)
}

// statusesOf returns the statuses of self and of the federates of live.
func (r *restoreUnderWay) statusesOf(self FederateHandle, live []FederateHandle) []uint8 {
	statuses := []uint8{r.statuses[self]}
	for _, f := range live {
		statuses = append(statuses, r.statuses[f])
	}
	return statuses
}

// begins decides, while the restore is pending, whether it begins (every
// participant still joined has its saved state): done is false while
// one of self and live has not answered.
func (r *restoreUnderWay) begins(self FederateHandle, live []FederateHandle) (begins, done bool) {
	if r.failed != 0 {
		return false, true
	}
	statuses := r.statusesOf(self, live)
	for _, st := range statuses {
		if st == 0 {
			return false, false
		}
	}
	return !slices.Contains(statuses, rsMissing), true
}

// outcome decides the restore once it began: done is false while one of
// self and live has not restored; reason 0 is restored.
func (r *restoreUnderWay) outcome(self FederateHandle, live []FederateHandle) (reason hla.RestoreFailureReason, done bool) {
	statuses := r.statusesOf(self, live)
	reason = r.failed
	if slices.Contains(statuses, rsAbort) {
		reason = hla.RestoreAborted
	}
	if reason == 0 {
		for _, st := range statuses {
			if st < rsComplete {
				return 0, false
			}
		}
		if slices.Contains(statuses, rsNotComplete) {
			reason = hla.FederateReportedFailureDuringRestore
		}
	}
	return reason, true
}

// restoreGo publishes the decision to begin (or refuse) the restore and
// acts on it here.
func (c *Core) restoreGo(ok bool) {
	b := binary.AppendUvarint(nil, c.saveRestore.restore.version)
	c.setState(keyRestoreBegin, append(b, boolByte(ok)))
	c.restoreBegins(c.saveRestore.restore.version, ok)
}

// restoreBegins begins the restore here (ok) or ends the request.
func (c *Core) restoreBegins(version uint64, ok bool) {
	if version != c.saveRestore.restore.version || c.saveRestore.restore.phase != restorePending {
		return
	}
	label := c.saveRestore.restore.label
	if !ok {
		if c.saveRestore.restore.requester == c.self {
			c.push(hla.RequestFederationRestoreFailed{Label: label})
			c.setState(keyRestore, nil)
			c.startOp(Op{Kind: OpRelease, Key: registerSaveRestore}, func(OpResult) {})
		}
		c.setState(keyRestoreStatus, nil)
		c.saveRestore.restore.version, c.saveRestore.restore.phase, c.saveRestore.restore.parts, c.saveRestore.restore.snapshot, c.saveRestore.restore.statuses, c.saveRestore.restore.assignment = 0, restoreIdle, nil, nil, nil, nil
		return
	}
	if c.saveRestore.restore.requester == c.self {
		c.push(hla.RequestFederationRestoreSucceeded{Label: label})
	}
	c.push(hla.FederationRestoreBegun{})
	if c.saveRestore.save.phase != saveIdle {
		// A save still pending here (it cannot have been initiated: the
		// register let the restore in after the save ended) ends.
		c.saveRestore.endSave()
	}
	snap := c.saveRestore.restore.snapshot
	c.saveRestore.restore.snapshot = nil
	c.saveRestore.restore.phase = restoreBegun
	if snap == nil {
		// Told to restore without a saved state here (a decision that
		// contradicts this federate's answer): it cannot.
		c.saveRestore.restore.phase = restoreDone
		c.publishRestoreStatus(rsNotComplete)
		c.restoreCheck()
		return
	}
	remap := make(map[FederateHandle]FederateHandle, len(c.saveRestore.restore.assignment))
	for f, a := range c.saveRestore.restore.assignment {
		remap[a.handle] = f
	}
	me := c.saveRestore.restore.assignment[c.self]
	c.saveRestore.restoredAs = me.name
	if c.tracer != nil {
		// The mark first: what applying the snapshot traces (the
		// declarations and ownership it restores) is the restored
		// branch's, after the return to the save point.
		c.traceRestore(label, version)
	}
	c.applySnapshot(snap, version, remap)
	c.setState(keyBranch, binary.AppendUvarint(nil, version))
	c.queueEndingAt(hla.InitiateFederateRestore{Label: label, Name: me.name, Handle: me.handle}, unseenRestore)
	// What the restored branch already sent here waited for this.
	future := c.saveRestore.future
	c.saveRestore.future = nil
	for _, d := range future {
		c.handle(d, true)
	}
}

// RestoredName returns the name of the saved federate this federate
// restored as in its last restore (its own name when it restored its own
// state, or before any restore): the name its own saved state is filed
// under.
func (c *Core) RestoredName() string {
	if c.saveRestore.restoredAs == "" {
		return c.cfg.Name
	}
	return c.saveRestore.restoredAs
}

// restoreAssign assigns every federate of parts (those joined now) the
// saved federate of label's saved set it restores as: the one it is
// (same handle: it took part in the save), else, type by type, the
// unclaimed saved federates to the other joined federates, both in
// handle order. It fails when there is no saved set, or when the joined
// federates' types do not match the saved set's (the same number of
// federates of each type, §4.24).
func (c *Core) restoreAssign(label string, parts []FederateHandle) (map[FederateHandle]restoreAs, error) {
	if c.cfg.Saves == nil {
		return nil, errNoSaves
	}
	b, err := c.cfg.Saves.ReadSet(label)
	if err != nil {
		return nil, err
	}
	saved, err := decodeSavedSet(b)
	if err != nil {
		return nil, err
	}
	typeOf := func(f FederateHandle) string {
		if f == c.self {
			return c.cfg.Type
		}
		return c.federation.members[f].Type
	}
	if len(saved) != len(parts) {
		return nil, fmt.Errorf("%w: %d federates saved, %d joined", errRestoreTypes, len(saved), len(parts))
	}
	as := make(map[FederateHandle]restoreAs, len(parts))
	claimed := make(map[FederateHandle]bool, len(saved))
	for _, m := range saved {
		f := FederateHandle(m.Handle)
		if slices.Contains(parts, f) && typeOf(f) == m.Type {
			as[f] = restoreAs{name: m.Name, handle: f}
			claimed[f] = true
		}
	}
	slices.SortFunc(saved, func(a, b snapMember) int { return compareUint(a.Handle, b.Handle) })
	for _, f := range parts { // sorted
		if _, ok := as[f]; ok {
			continue
		}
		for _, m := range saved {
			if !claimed[FederateHandle(m.Handle)] && m.Type == typeOf(f) {
				as[f] = restoreAs{name: m.Name, handle: FederateHandle(m.Handle)}
				claimed[FederateHandle(m.Handle)] = true
				break
			}
		}
		if _, ok := as[f]; !ok {
			return nil, fmt.Errorf("%w: no saved federate of type %q for %d", errRestoreTypes, typeOf(f), f)
		}
	}
	return as, nil
}

// FederateRestoreComplete (§4.28) reports this federate's restore (ok
// false: FederateRestoreNotComplete). Errors: ErrRestoreNotRequested.
func (c *Core) FederateRestoreComplete(ok bool) error {
	if err := c.check(); err != nil {
		return err
	}
	if c.saveRestore.restore.phase != restoreBegun {
		return hla.ErrRestoreNotRequested
	}
	if c.unseenHas(unseenRestore) {
		return notYetEnabled(hla.ErrRestoreNotRequested, "InitiateFederateRestore")
	}
	c.saveRestore.restore.phase = restoreDone
	status := uint8(rsComplete)
	if !ok {
		status = rsNotComplete
	}
	c.publishRestoreStatus(status)
	c.restoreCheck()
	return nil
}

// AbortFederationRestore (§4.30) ends the restore under way as not
// restored. Errors: ErrRestoreNotInProgress.
func (c *Core) AbortFederationRestore() error {
	if err := c.check(); err != nil {
		return err
	}
	if c.saveRestore.restore.phase == restoreIdle {
		return hla.ErrRestoreNotInProgress
	}
	c.publishRestoreStatus(rsAbort)
	c.restoreCheck()
	return nil
}

// QueryFederationRestoreStatus (§4.31): FederationRestoreStatusResponse
// tells each federate's status.
func (c *Core) QueryFederationRestoreStatus() error {
	if err := c.check(); err != nil {
		return err
	}
	status := func(f FederateHandle) hla.RestoreStatus {
		st, known := c.saveRestore.restore.statuses[f]
		switch {
		case c.saveRestore.restore.phase == restoreIdle:
			return hla.NoRestoreInProgress
		case c.saveRestore.restore.phase == restorePending && (!known || st == rsReady || st == rsMissing):
			if known {
				return hla.FederateWaitingForRestoreToBegin
			}
			return hla.FederateRestoreRequestPending
		case st >= rsComplete:
			return hla.FederateWaitingForFederationToRestore
		}
		return hla.FederateRestoring
	}
	// The pre-restore handle is the saved federate's, which the restore
	// brings back; the post-restore one the federate's own, which it
	// keeps (docs/saverestore.md).
	pre := func(f FederateHandle) FederateHandle {
		if a, ok := c.saveRestore.restore.assignment[f]; ok {
			return a.handle
		}
		return f
	}
	out := []hla.FederateRestoreStatus{{PreRestore: pre(c.self), PostRestore: c.self, Status: status(c.self)}}
	for f := range c.federation.members {
		out = append(out, hla.FederateRestoreStatus{PreRestore: pre(f), PostRestore: f, Status: status(f)})
	}
	slices.SortFunc(out, func(a, b hla.FederateRestoreStatus) int { return compareUint(a.PreRestore, b.PreRestore) })
	c.push(hla.FederationRestoreStatusResponse{Statuses: out})
	return nil
}

// restoreDecided ends the restore: FederationRestored or NotRestored.
func (c *Core) restoreDecided(version uint64, reason hla.RestoreFailureReason) {
	if version != c.saveRestore.restore.version || c.saveRestore.restore.phase < restoreBegun {
		return
	}
	if reason == 0 {
		c.push(hla.FederationRestored{})
	} else {
		c.push(hla.FederationNotRestored{Reason: reason})
	}
	coord := c.saveRestore.restore.requester
	c.saveRestore.restore.version, c.saveRestore.restore.phase, c.saveRestore.restore.parts, c.saveRestore.restore.statuses, c.saveRestore.restore.failed, c.saveRestore.restore.assignment = 0, restoreIdle, nil, nil, 0, nil
	c.setState(keyRestoreStatus, nil)
	if coord == c.self {
		c.setState(keyRestore, nil)
		c.startOp(Op{Kind: OpRelease, Key: registerSaveRestore}, func(OpResult) {})
	}
}

// ---- State and membership ----

// saveRestoreStateChanged folds another federate's save and restore state into
// this federate's view.
func (c *Core) saveRestoreStateChanged(h FederateHandle, key string, value []byte) {
	if value == nil {
		return
	}
	r := wireReader{b: value}
	switch key {
	case keySave:
		version := r.uvarint("version")
		label := string(r.bytes("label"))
		hasTime := r.byte("timed") == 1
		at := r.float64("time")
		parts := decodeHandles(&r)
		saved := make([]snapMember, 0, len(parts))
		for _, f := range parts {
			m := snapMember{Handle: uint64(f)}
			m.Name = string(r.bytes("name"))
			m.Type = string(r.bytes("type"))
			saved = append(saved, m)
		}
		if r.err != nil || len(r.b) != 0 || !slices.IsSorted(parts) {
			c.stats.Malformed++
			return
		}
		c.saveAnnounced(h, version, label, hasTime, at, saved)
	case keySaveStatus:
		c.noteSaveStatus(h, value)
		c.saveMaybeCapture()
		c.saveCheck()
	case keySaveOutcome:
		version := r.uvarint("version")
		reason := r.byte("reason")
		if r.err != nil || len(r.b) != 0 {
			c.stats.Malformed++
			return
		}
		c.saveDecided(version, hla.SaveFailureReason(reason))
	case keyRestore:
		version := r.uvarint("version")
		label := string(r.bytes("label"))
		parts := decodeHandles(&r)
		as := make(map[FederateHandle]restoreAs, len(parts))
		for _, f := range parts {
			if r.err != nil {
				break
			}
			a := restoreAs{handle: FederateHandle(r.uvarint("saved handle"))}
			a.name = string(r.bytes("saved name"))
			as[f] = a
		}
		if r.err != nil || len(r.b) != 0 || len(as) != len(parts) {
			c.stats.Malformed++
			return
		}
		c.restoreAnnounced(h, version, label, parts, as)
	case keyRestoreStatus:
		c.noteRestoreStatus(h, value)
		c.restoreCheck()
	case keyBranch:
		v := r.uvarint("branch")
		if r.err != nil || len(r.b) != 0 {
			c.stats.Malformed++
			return
		}
		if v > c.saveRestore.branch && !(c.saveRestore.restore.phase != restoreIdle && c.saveRestore.restore.version == v) {
			c.followBranch(v)
		}
	case keyRestoreBegin, keyRestoreOutcome:
		version := r.uvarint("version")
		v := r.byte("outcome")
		if r.err != nil || len(r.b) != 0 {
			c.stats.Malformed++
			return
		}
		if key == keyRestoreBegin {
			c.restoreBegins(version, v == 1)
		} else {
			c.restoreDecided(version, hla.RestoreFailureReason(v))
		}
	}
}

// followBranch moves a federate that takes no part in a restore (it
// joined after the request, or after the restore) to the federation's
// branch: it keeps its state, forgets the others' promises (their time
// went back), and acts on what the branch sent it already.
func (c *Core) followBranch(v uint64) {
	c.saveRestore.branch = v
	if err := c.timeCore.Rebase(); err != nil {
		c.stats.Malformed++ // cannot happen: the node's own state is valid
	}
	c.setState(keyBranch, binary.AppendUvarint(nil, v))
	future := c.saveRestore.future
	c.saveRestore.future = nil
	for _, d := range future {
		c.handle(d, true)
	}
}

// saveRestoreMemberLeft fails the save or restore under way when a federate
// leaves it (resigned or lost), and re-checks: it may have been the one
// waited for, or the decider.
func (c *Core) saveRestoreMemberLeft(h FederateHandle, lost bool) {
	if c.saveRestore.save.phase != saveIdle && c.saveRestore.save.failed == 0 && slices.ContainsFunc(c.saveRestore.save.saved, func(m snapMember) bool { return FederateHandle(m.Handle) == h }) {
		c.saveRestore.save.failed = hla.FederateResignedDuringSave
		if lost {
			c.saveRestore.save.failed = hla.RTIDetectedFailureDuringSave
		}
	}
	if c.saveRestore.restore.phase != restoreIdle && c.saveRestore.restore.failed == 0 && slices.Contains(c.saveRestore.restore.parts, h) {
		c.saveRestore.restore.failed = hla.FederateResignedDuringRestore
		if lost {
			c.saveRestore.restore.failed = hla.RTIDetectedFailureDuringRestore
		}
	}
	c.saveCheck()
	c.restoreCheck()
}

// saveRestoreProcess runs after each pass over the time core: a timed save may
// now be initiated, the capture may now be complete.
func (c *Core) saveRestoreProcess() {
	switch c.saveRestore.save.phase {
	case savePending:
		c.saveMaybeInitiate()
	case saveInitiated, saveBegun, saveDone:
		c.saveMaybeCapture()
	}
}

// branchGate decides what happens to a delivery before it is acted on:
// an older branch's is dropped, a newer one's is held until this
// federate restores, and during a save everything but time messages is
// held until the save ends. It reports whether the delivery goes on.
//
// A replayed delivery (one held before) was reported received already.
func (c *Core) branchGate(d reliable.Delivery, m *wireMsg, replay bool) bool {
	switch {
	case m.Branch < c.saveRestore.branch:
		c.stats.Abandoned++
	case m.Branch > c.saveRestore.branch:
		c.saveRestore.future = append(c.saveRestore.future, rawOf(d))
	case c.saveRestore.save.phase >= saveInitiated && m.Kind != kindTime:
		c.saveRestore.save.held = append(c.saveRestore.save.held, rawOf(d))
	default:
		return true
	}
	if !replay {
		c.received(d)
	}
	return false
}

// rawOf copies d to act on later (its payload aliases a frame).
func rawOf(d reliable.Delivery) reliable.Delivery {
	d.Payload = slices.Clone(d.Payload)
	return d
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func compareUint[T ~uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
