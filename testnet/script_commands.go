package testnet

import (
	"fmt"
	"strings"

	"github.com/meshrti/meshrti/peer"
)

// A command is one entry of the scenario language: its name, the
// arguments it takes, one line of help and its handler. Adding a command
// is adding an entry to commands; ScriptHelp and the usage errors come
// from the same entry.
type command struct {
	name  string
	usage string // the arguments after the name; "" for none
	help  string
	form  form
	run   handler
}

// handler carries out a command.
type handler = func(s *simulation, c *call) (*serviceError, error)

// service is the handler of a command that calls one service of the
// federate it names, without arguments.
func service(svc func(*peer.Federate) error) handler {
	return func(s *simulation, c *call) (*serviceError, error) { return fail(c.name, svc(c.f)) }
}

// completion is the handler of a command that reports the federate's
// part done, or with the flag failed not done.
func completion(done, notDone func(*peer.Federate) error) handler {
	return func(s *simulation, c *call) (*serviceError, error) {
		if c.failed {
			return fail(c.name, notDone(c.f))
		}
		return fail(c.name, done(c.f))
	}
}

// form says how a command's positional words are read.
type form int

const (
	// oneFederate: one positional word, a joined federate (the handler
	// finds it in call.name, call.i and call.f); the words passive,
	// if-available, failed and universally after it are flags.
	oneFederate form = iota
	// ownWords: the handler reads the positional words itself.
	ownWords
	// first: like ownWords, and the command starts the federation
	// itself (any other starts it with the defaults when none runs).
	first
	// prefix: a word before another command (expect-error); the step
	// reads it, it has no handler.
	prefix
)

// commands is the scenario language, by chapter as the core is.
var commands = []command{
	// The harness: the federation, the network, the step.
	{name: "federation", usage: "[seed=N] [loss=P dup=P reorder=P delay=D jitter=D] [quiet=D]", form: first, run: (*simulation).federation,
		help: "starts the simulated federation (optional; must come first; default seed 0, no faults)"},
	{name: "expect-error", usage: "COMMAND ...", form: prefix,
		help: "runs COMMAND; the step prints `expected an error, got none` when it succeeds"},
	{name: "wait", usage: "[NAME grant=T] [quiet=D]", form: ownWords, run: (*simulation).wait,
		help: "waits until NAME was granted T (bounded), then until quiet for D"},
	{name: "partition", usage: "A,B / C", form: ownWords, run: (*simulation).partition,
		help: "splits the network; names not listed form one more side"},
	{name: "heal", form: ownWords, run: (*simulation).heal,
		help: "removes the partition; prints nothing (the next step prints what followed)"},
	{name: "faults", usage: "[loss=P dup=P reorder=P delay=D jitter=D]", form: ownWords, run: (*simulation).setFaults,
		help: "sets the faults of every link (no arguments: a perfect network)"},
	{name: "link-faults", usage: "FROM TO [loss=...]", form: ownWords, run: (*simulation).linkFaults,
		help: "sets the faults of one one-way link"},
	{name: "exception-names", usage: "1516e|hla4|off", form: ownWords, run: (*simulation).exceptionNames,
		help: "names the HLA exception in error lines (`NAME: error: EXCEPTION: text`) as a client of that API gets it through serve, or not (off, the default)"},
	{name: "crash", usage: "NAME", run: (*simulation).crash,
		help: "the federate's host dies: packets stop, the control plane reports it lost"},
	{name: "restart", usage: "NAME", run: (*simulation).restart,
		help: "a crashed federate's host comes back: a new federate joins under the name"},

	// Federation management.
	{name: "join", usage: "NAME...", form: ownWords, run: (*simulation).join,
		help: "joins federates, one after the other"},
	{name: "resign", usage: "NAME [action=delete|divest|none]", run: (*simulation).resign,
		help: "resigns (default: delete objects)"},
	{name: "create", usage: "[time=integer|float] [mim=KIND] [modules=clash]", form: ownWords, run: (*simulation).create,
		help: "creates the federation execution as a connected non-member (modules=clash adds a module that redefines a MIM class otherwise)"},
	{name: "destroy", form: ownWords, run: (*simulation).destroy,
		help: "destroys the federation execution as a connected non-member (an error while federates are joined)"},
	{name: "list", usage: "[NAME]", form: ownWords, run: (*simulation).list,
		help: "lists the federation executions (`federations: [this]`); with NAME, the member asks and its callback answers"},
	{name: "modules", usage: "NAME", run: (*simulation).modules,
		help: "prints the FOM modules of the federate's FDD, the MIM first"},

	// Declaration management.
	{name: "publish", usage: "NAME class=C attrs=A,B", run: (*simulation).publish,
		help: "publishes attributes of an object class (adding to those published before; attrs= names none)"},
	{name: "subscribe", usage: "NAME class=C attrs=A,B [passive] [rate=R] [regions=R1,R2]", run: (*simulation).subscribe,
		help: "subscribes to attributes of an object class (adding to those subscribed before; attrs= names none)"},
	{name: "unpublish", usage: "NAME class=C [attrs=A,B]", run: (*simulation).unpublish,
		help: "unpublishes a whole object class, or some of its attributes"},
	{name: "unsubscribe", usage: "NAME class=C [attrs=A,B] [regions=R1,R2]", run: (*simulation).unsubscribe,
		help: "unsubscribes from a whole object class, from some of its attributes, or from attributes with regions"},
	{name: "publish-interaction", usage: "NAME class=C", run: (*simulation).interactionDeclaration,
		help: "publishes an interaction class"},
	{name: "subscribe-interaction", usage: "NAME class=C [passive] [regions=R1,R2]", run: (*simulation).interactionDeclaration,
		help: "subscribes to an interaction class"},
	{name: "unpublish-interaction", usage: "NAME class=C", run: (*simulation).interactionDeclaration,
		help: "unpublishes an interaction class"},
	{name: "unsubscribe-interaction", usage: "NAME class=C [regions=R1,R2]", run: (*simulation).interactionDeclaration,
		help: "unsubscribes from an interaction class"},
	{name: "publish-directed", usage: "NAME class=C [interactions=I,J]", run: (*simulation).directedDeclaration,
		help: "publishes directed interactions of an object class"},
	{name: "subscribe-directed", usage: "NAME class=C [interactions=I,J] [universally]", run: (*simulation).directedDeclaration,
		help: "subscribes to directed interactions of an object class"},
	{name: "unpublish-directed", usage: "NAME class=C [interactions=I,J]", run: (*simulation).directedDeclaration,
		help: "unpublishes directed interactions of an object class"},
	{name: "unsubscribe-directed", usage: "NAME class=C [interactions=I,J]", run: (*simulation).directedDeclaration,
		help: "unsubscribes from directed interactions of an object class"},

	// Object management.
	{name: "reserve", usage: "NAME name=N", run: (*simulation).names,
		help: "reserves an object instance name (the answer is an event)"},
	{name: "reserve-names", usage: "NAME names=N,M", run: (*simulation).names,
		help: "reserves several object instance names at once"},
	{name: "release-name", usage: "NAME name=N", run: (*simulation).names,
		help: "releases a reserved object instance name"},
	{name: "release-names", usage: "NAME names=N,M", run: (*simulation).names,
		help: "releases several reserved object instance names"},
	{name: "register", usage: "NAME class=C [as=LABEL] [name=N] [attrs=A,B regions=R1,R2]", run: (*simulation).register,
		help: "registers an instance; later commands and output call it LABEL, else N, else its RTI-chosen name"},
	{name: "update", usage: "NAME obj=LABEL Attr=text... [ts=T] [tag=X]", run: (*simulation).update,
		help: "updates attribute values, time-stamped with ts"},
	{name: "send", usage: "NAME class=C Param=text... [ts=T] [tag=X] [regions=R1,R2]", run: (*simulation).send,
		help: "sends an interaction"},
	{name: "send-directed", usage: "NAME class=C obj=LABEL Param=text... [ts=T] [tag=X]", run: (*simulation).sendDirected,
		help: "sends a directed interaction to an instance"},
	{name: "delete", usage: "NAME obj=LABEL [ts=T] [tag=X]", run: (*simulation).delete,
		help: "deletes an instance"},
	{name: "local-delete", usage: "NAME obj=LABEL", run: (*simulation).localDelete,
		help: "deletes an instance locally: the federate forgets it"},
	{name: "request-update", usage: "NAME obj=LABEL attrs=A,B | class=C attrs=A,B [regions=R1,R2] [tag=X]", run: (*simulation).requestUpdate,
		help: "requests attribute value updates of an instance or of a class"},
	{name: "transport", usage: "NAME obj=LABEL attrs=A,B type=reliable|best-effort | class=C type=...", run: (*simulation).transport,
		help: "requests a transportation type change of attributes or of an interaction class"},
	{name: "query-transport", usage: "NAME obj=LABEL attr=A | class=C fed=F", run: (*simulation).queryTransport,
		help: "queries the transportation type of an attribute, or of F's interaction class"},

	// Ownership management.
	{name: "divest", usage: "NAME obj=LABEL attrs=A,B [mode=unconditional|negotiated|if-wanted] [tag=X]", run: (*simulation).divest,
		help: "divests attributes; if-wanted prints `NAME: divested OBJ attrs=...`"},
	{name: "confirm-divestiture", usage: "NAME obj=LABEL attrs=A,B [tag=X]", run: (*simulation).confirmDivestiture,
		help: "confirms a negotiated divestiture"},
	{name: "cancel-divestiture", usage: "NAME obj=LABEL attrs=A,B", run: (*simulation).ownershipService,
		help: "cancels a negotiated divestiture"},
	{name: "acquire", usage: "NAME obj=LABEL attrs=A,B [if-available] [tag=X]", run: (*simulation).acquire,
		help: "acquires attributes"},
	{name: "cancel-acquisition", usage: "NAME obj=LABEL attrs=A,B", run: (*simulation).ownershipService,
		help: "cancels an acquisition"},
	{name: "deny-release", usage: "NAME obj=LABEL attrs=A,B", run: (*simulation).ownershipService,
		help: "denies a request to release attributes"},
	{name: "query-owner", usage: "NAME obj=LABEL attr=A", run: (*simulation).queryOwner,
		help: "queries an attribute's owner (the answer is an event)"},
	{name: "is-owned", usage: "NAME obj=LABEL attr=A", run: (*simulation).isOwned,
		help: "prints `NAME: owned OBJ A=yes|no`"},
	{name: "handoff", usage: "A B obj=O attrs=X rounds=N", form: ownWords, run: (*simulation).handoff,
		help: "passes attributes from A to B and back N times, as fast as the federation allows; prints one line"},

	// Time management.
	{name: "enable-regulation", usage: "NAME lookahead=L", run: (*simulation).enableRegulation,
		help: "enables time regulation"},
	{name: "disable-regulation", usage: "NAME", run: service((*peer.Federate).DisableTimeRegulation),
		help: "disables time regulation"},
	{name: "modify-lookahead", usage: "NAME lookahead=L", run: (*simulation).modifyLookahead,
		help: "changes the lookahead (a lower one takes effect as time advances)"},
	{name: "enable-constrained", usage: "NAME", run: service((*peer.Federate).EnableTimeConstrained),
		help: "enables time constrained"},
	{name: "disable-constrained", usage: "NAME", run: service((*peer.Federate).DisableTimeConstrained),
		help: "disables time constrained"},
	{name: "advance", usage: "NAME t=T", run: (*simulation).advance,
		help: "time advance request (TAR)"},
	{name: "advance-available", usage: "NAME t=T", run: (*simulation).advance,
		help: "time advance request available (TARA)"},
	{name: "next-message", usage: "NAME t=T", run: (*simulation).advance,
		help: "next message request (NMR)"},
	{name: "next-message-available", usage: "NAME t=T", run: (*simulation).advance,
		help: "next message request available (NMRA)"},
	{name: "flush-queue", usage: "NAME t=T", run: (*simulation).advance,
		help: "flush queue request (FQR)"},
	{name: "retract", usage: "NAME tag=X", run: (*simulation).retract,
		help: "retracts the time-stamped message sent with tag X"},
	{name: "change-order", usage: "NAME obj=LABEL attrs=A,B order=receive|timestamp | class=C order=...", run: (*simulation).changeOrder,
		help: "changes the order type of attributes of an owned instance, or of a published interaction class"},
	{name: "async", usage: "NAME on|off", form: ownWords, run: (*simulation).async,
		help: "enables or disables asynchronous delivery (off by default)"},
	{name: "query", usage: "NAME", run: (*simulation).query,
		help: "prints `NAME: time=T galt=G` after the step's wait (galt=none when no regulator bounds it)"},
	{name: "query-lits", usage: "NAME", run: (*simulation).queryLITS,
		help: "prints `NAME: lits=L` after the step's wait (lits=none when nothing bounds it)"},

	// Data distribution management.
	{name: "region", usage: "NAME as=R DIM=lo,hi...", run: (*simulation).region,
		help: "creates a region with the ranges [lo, hi) and commits it"},
	{name: "modify-region", usage: "NAME region=R DIM=lo,hi...", run: (*simulation).modifyRegion,
		help: "sets a region's ranges and commits them"},
	{name: "delete-region", usage: "NAME region=R", run: (*simulation).deleteRegion,
		help: "deletes a region"},
	{name: "associate", usage: "NAME obj=LABEL attrs=A,B regions=R1,R2", run: (*simulation).associate,
		help: "associates regions for updates"},
	{name: "unassociate", usage: "NAME obj=LABEL attrs=A,B regions=R1,R2", run: (*simulation).associate,
		help: "unassociates regions for updates"},

	// Synchronization points, save and restore.
	{name: "sync", usage: "NAME label=L [tag=X] [set=A,B]", run: (*simulation).sync,
		help: "registers a synchronization point, with set= for those federates only"},
	{name: "achieve", usage: "NAME label=L [failed]", run: (*simulation).achieve,
		help: "achieves a synchronization point (failed: unsuccessfully)"},
	{name: "save", usage: "NAME label=L [t=T]", run: (*simulation).save,
		help: "requests a federation save, at time T when given"},
	{name: "save-begun", usage: "NAME", run: service((*peer.Federate).FederateSaveBegun),
		help: "the federate's save has begun"},
	{name: "save-complete", usage: "NAME [failed]", run: completion((*peer.Federate).FederateSaveComplete, (*peer.Federate).FederateSaveNotComplete),
		help: "the federate's save is complete (failed: not complete)"},
	{name: "abort-save", usage: "NAME", run: service((*peer.Federate).AbortFederationSave),
		help: "aborts the federation save"},
	{name: "query-save", usage: "NAME", run: service((*peer.Federate).QueryFederationSaveStatus),
		help: "queries the federation save status (the answer is an event)"},
	{name: "restore", usage: "NAME label=L", run: (*simulation).restore,
		help: "requests a federation restore"},
	{name: "restore-complete", usage: "NAME [failed]", run: completion((*peer.Federate).FederateRestoreComplete, (*peer.Federate).FederateRestoreNotComplete),
		help: "the federate's restore is complete (failed: not complete)"},
	{name: "abort-restore", usage: "NAME", run: service((*peer.Federate).AbortFederationRestore),
		help: "aborts the federation restore"},
	{name: "query-restore", usage: "NAME", run: service((*peer.Federate).QueryFederationRestoreStatus),
		help: "queries the federation restore status (the answer is an event)"},

	// Support services: switches and callbacks.
	{name: "switch", usage: "NAME relevance|attribute-relevance|scope|interaction-relevance|service-reporting|exception-reporting on|off|get", form: ownWords, run: (*simulation).switchCommand,
		help: "sets an advisory or reporting switch; get prints `NAME: switch S on|off`"},
	{name: "callbacks", usage: "NAME on|off", form: ownWords, run: (*simulation).callbacks,
		help: "enables or disables the federate's callbacks"},

	// The Management Object Model (script_mom.go).
	{name: "mom-subscribe", usage: "NAME", run: (*simulation).momSubscribe,
		help: "subscribes to every attribute of HLAfederate and HLAfederation and to every MOM report"},
	{name: "mom-request", usage: "NAME [of=F|federation] attrs=A,B", run: (*simulation).momRequest,
		help: "asks for attributes of F's HLAfederate instance (of=federation: the federation's; no of: every federate's)"},
	{name: "mom-send", usage: "NAME class=HLAfederate.HLArequest.HLArequestPublications [to=F] [object=OBJ] [period=S] [index=I] [action=A] [label=L]", run: (*simulation).momSend,
		help: "sends a MOM interaction (the class under HLAinteractionRoot.HLAmanager) about federate F"},
}

// commandIndex finds a command of the table by name.
var commandIndex = func() map[string]*command {
	m := make(map[string]*command, len(commands))
	for i := range commands {
		m[commands[i].name] = &commands[i]
	}
	return m
}()

// ScriptHelp returns the scenario language's commands, one a line with
// its arguments, each followed by an indented line of help, in the order
// of the HLA standard's chapters. docs/testing.md describes the language.
func ScriptHelp() string {
	var b strings.Builder
	for _, c := range commands {
		fmt.Fprintf(&b, "%s\n\t%s\n", strings.TrimSpace(c.name+" "+c.usage), c.help)
	}
	return b.String()
}
