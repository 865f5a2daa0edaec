// Package version says which meshrti a binary or an embedding program
// runs: the release (a module version such as v0.6.0, or a
// pseudo-version for a build between releases), the commit it was built
// from, and the wire protocol it speaks.
//
// The release comes, in order of preference, from the linker (the
// release script stamps it: -ldflags "-X
// github.com/meshrti/meshrti/version.stamp=v0.6.0"), then from the Go
// build information: the main module's version when meshrti is the main
// module (go install ...@v0.6.0, or go build in a clone at a tag), the
// version of the dependency when meshrti is embedded in another
// program. "(devel)" means a build whose version nobody stamped.
//
// # Mixing versions
//
// Federates of different releases mix in one federation when they speak
// the same wire protocol (Protocol): the gossip control plane refuses a
// node whose protocol differs, naming both (gossip.ErrProtocolVersion).
// Releases that change the messages federates exchange change Protocol;
// the others keep it.
package version
