package core

import "strconv"

// The control plane's keys: everything the core keeps in the
// federation's replicated state and its register, in one place.
//
// Replicated state is per federate: each federate writes its own keys
// (Op OpSetState) and reads everyone's as the control plane reports them
// (StateChanged); a value's version only grows, and nil deletes the key.
// The register is federation-wide: a key is held by at most one federate
// at a time (OpAcquire, OpSwap, OpRelease), which is how something is
// made unique. The strings are part of the wire protocol between
// federates and stay short; the names below say what they hold, and
// each comment gives the value's layout (uvarints unless said).
//
// The driver (package peer) keeps two keys of its own in the same
// replicated state: "d/u", its data-plane address, and "d/mode", the
// transport mode the federation decided.

// Replicated state: declarations (advisories.go, requests.go).
const (
	// keyObjectSubscription + object class handle (decimal): this
	// federate's subscription to the class, what senders filter by and
	// the advisories judge from. Value: active (one byte), the update
	// rate's name (length, bytes), the attributes (count, handles), then,
	// when some attributes are subscribed with regions, those attributes
	// (count, then each: handle, length, encodeRegions). nil: none.
	keyObjectSubscription = "s/o/"
	// keyInteractionSubscription + interaction class handle (decimal):
	// this federate's subscription to the class. Value: active (one
	// byte), then encodeRegions of its subscription regions when it
	// subscribed with regions. nil: none.
	keyInteractionSubscription = "s/i/"
	// keyInteractionTransport + interaction class handle (decimal): the
	// transportation this federate sends the class with, when it changed
	// it (RequestInteractionTransportationTypeChange). Value: one byte,
	// an hla.TransportationType.
	keyInteractionTransport = "t/i/"
)

// Replicated state: the federation (federation.go).
const (
	// keyResignDirective: this federate's automatic resign directive,
	// what the others do with its objects when it is lost
	// (SetAutomaticResignDirective). Value: one byte, a ResignAction.
	keyResignDirective = "resign"
)

// Replicated state: synchronization points (syncpoints.go). Each key is
// the prefix + the point's label.
const (
	// keySyncPoint: a point this federate registered. Value: the
	// register key's version (which tells one registration of a label
	// from a later one), the tag (length, bytes), the set (count,
	// handles; 0: every joined federate).
	keySyncPoint = "y/"
	// keySyncAchieved: this federate achieved the point. Value: success
	// (one byte), the point's version.
	keySyncAchieved = "a/"
	// keySyncDone: the point is synchronized, written by the federate
	// that decides it. Value: the point's version, the federates that
	// failed to achieve it (count, handles).
	keySyncDone = "z/"
)

// Replicated state: save and restore (saverestore.go). The version in
// each value is the version of the register key registerSaveRestore that
// the save's or restore's requester took: it names the save or restore.
const (
	// keySave: the save this federate requested. Value: version, label
	// (length, bytes), timed (one byte), the save time (8 bytes, a
	// big-endian float64), the federates taking part (count, handles),
	// then each one's name and federate type (length, bytes each): the
	// saved set, the same in every federate of the save.
	keySave = "sv"
	// keySaveStatus: how far this federate got in the save. Value:
	// version, a save status (one byte, saverestore.go),
	// and the federate's send positions at initiation (count, then each:
	// group, sequence number).
	keySaveStatus = "ss"
	// keySaveOutcome: the save's outcome, written by the federate that
	// decides it. Value: version, the failure reason (one byte, an
	// hla.SaveFailureReason; 0: saved).
	keySaveOutcome = "sd"
	// keyRestore: the restore this federate requested. Value: version,
	// label (length, bytes), the federates taking part (count, handles),
	// then for each of them the saved federate it restores as (handle,
	// name: length, bytes).
	keyRestore = "rr"
	// keyRestoreStatus: how far this federate got in the restore. Value:
	// version, a restore status (one byte, saverestore.go).
	keyRestoreStatus = "rs"
	// keyRestoreBegin: whether the restore begins, written by the
	// federate that decides it once everyone answered. Value: version,
	// begins (one byte).
	keyRestoreBegin = "rd"
	// keyRestoreOutcome: the restore's outcome, written by the deciding
	// federate. Value: version, the failure reason (one byte, an
	// hla.RestoreFailureReason; 0: restored).
	keyRestoreOutcome = "rf"
	// keyBranch: the restore branch this federate is on (the version of
	// the last restore it went through); a federate that took no part in
	// a restore follows it from here. Value: the branch.
	keyBranch = "br"
)

// Register keys.
const (
	// registerSaveRestore is held by the requester of the save or
	// restore under way: one at a time, and its version names it. Value:
	// the label.
	registerSaveRestore = "saverestore"
	// registerSyncPoint + label is held by the registrar of a pending
	// synchronization point: labels are unique while their point is.
	// Value: the tag.
	registerSyncPoint = "sync/"
	// registerName + name is held by the federate that reserved the
	// object instance name (reservations.go).
	registerName = "objectName/"
	// registerToken + instance and attribute (tokenKey) orders the terms
	// of an attribute's ownership token: whoever swaps it from the
	// version it knew claims the unowned token (ownership_services.go).
	// Value: the claimer's restore branch.
	registerToken = "own/"
)

// objectSubscriptionKey is the key of this federate's subscription to
// object class oc.
func objectSubscriptionKey(oc ObjectClassHandle) string {
	return keyObjectSubscription + strconv.FormatUint(uint64(oc), 10)
}

// interactionSubscriptionKey is the key of this federate's subscription
// to interaction class ic.
func interactionSubscriptionKey(ic InteractionClassHandle) string {
	return keyInteractionSubscription + strconv.FormatUint(uint64(ic), 10)
}

// interactionTransportKey is the key of the transportation this
// federate sends interaction class ic with.
func interactionTransportKey(ic InteractionClassHandle) string {
	return keyInteractionTransport + strconv.FormatUint(uint64(ic), 10)
}

// nameKey is the register key of object instance name name.
func nameKey(name string) string { return registerName + name }

// tokenKey is the register key of (h, a)'s ownership terms.
func tokenKey(h ObjectInstanceHandle, a AttributeHandle) string {
	return registerToken + strconv.FormatUint(uint64(h.Federate), 10) + "." + strconv.FormatUint(h.Serial, 10) + "/" + strconv.FormatUint(uint64(a), 10)
}
