package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Protocol is the wire protocol this code speaks: the control plane's
// framing and messages and the data plane's frames. Nodes mix only with
// nodes of the same Protocol.
const Protocol = 3

// modulePath is meshrti's module path, looked up in the build
// information when meshrti is a dependency.
const modulePath = "github.com/meshrti/meshrti"

// stamp is the release the linker stamped in, if any (see the package
// documentation). It is set only at link time, never at run time.
var stamp string

// Info is what a binary knows of its own build.
type Info struct {
	// Release is the module version: v0.6.0, a pseudo-version
	// (v0.0.0-20261207042435-a5897af5b0c3), or "(devel)".
	Release string
	// Commit is the VCS revision built from, when the build recorded it
	// (a build in a clone does), with "+dirty" when the tree had
	// uncommitted changes; "" when unknown.
	Commit string
	// Time is the commit's time (RFC 3339) when recorded.
	Time string
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string
	// Protocol is the wire protocol (the constant Protocol).
	Protocol int
}

// Get returns this binary's Info.
func Get() Info {
	info := Info{Release: "(devel)", Protocol: Protocol}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		info.GoVersion = bi.GoVersion
		if bi.Main.Path == modulePath {
			info.Release = bi.Main.Version
		} else {
			for _, d := range bi.Deps {
				if d.Path == modulePath {
					info.Release = d.Version
					if d.Replace != nil && d.Replace.Version != "" {
						info.Release = d.Replace.Version
					}
				}
			}
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && info.Commit != "" {
			info.Commit += "+dirty"
		}
	}
	if stamp != "" {
		info.Release = stamp
	}
	if info.Release == "" {
		info.Release = "(devel)"
	}
	return info
}

// Release returns this binary's release (Get().Release).
func Release() string { return Get().Release }

// RTI returns what the Management Object Model reports as HLARTIversion:
// "meshrti RELEASE (IEEE 1516-2010; wire protocol N)".
func RTI() string {
	return fmt.Sprintf("meshrti %s (IEEE 1516-2010; wire protocol %d)", Release(), Protocol)
}

// String returns the lines "federate-node version" prints.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "meshrti %s\n", i.Release)
	if i.Commit != "" {
		fmt.Fprintf(&b, "commit %s", i.Commit)
		if i.Time != "" {
			fmt.Fprintf(&b, " (%s)", i.Time)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "wire protocol %d\n", i.Protocol)
	if i.GoVersion != "" {
		fmt.Fprintf(&b, "built with %s\n", i.GoVersion)
	}
	return b.String()
}
