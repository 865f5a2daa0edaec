package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/gossip"
)

// The flags every command that joins a federation shares, with one
// meaning everywhere (docs/cli.md lists each command's):
//
//	-federation-key  the federation's secret (node, monitor, record, replay, serve)
//	-profile         gossip timings: local, lan or wan
//	-log-level       debug, info, warn, error or off
//	-log-format      text or json; logs go to stderr
//
// -key was the federation key of node, monitor, record and replay; it is
// still taken there, with a warning. On serve, -key is the TLS private
// key.

// registerFederationKey registers -federation-key, and -key as its
// deprecated alias, which warns on fs's output when given.
func registerFederationKey(fs *flag.FlagSet, key *string) {
	fs.StringVar(key, "federation-key", "", "federation key: authenticates frames and encrypts gossip (at least 16 bytes); the same on every member")
	fs.Func("key", "deprecated: the federation `KEY`; use -federation-key", func(s string) error {
		fmt.Fprintf(fs.Output(), "federate-node %s: -key is deprecated and will be removed: use -federation-key\n", fs.Name())
		*key = s
		return nil
	})
}

// registerProfile registers -profile.
func registerProfile(fs *flag.FlagSet, p *string) {
	fs.Func("profile", "gossip timings, `PROFILE`: local (one host: failure declared in about 2 s), lan (about 5-10 s) or wan (sites apart: about 15-30 s); every member of a federation should use the same (default local)", func(s string) error {
		switch gossip.Profile(s) {
		case gossip.ProfileLocal, gossip.ProfileLAN, gossip.ProfileWAN:
			*p = s
			return nil
		}
		return fmt.Errorf("unknown profile %q (want local, lan or wan)", s)
	})
}

// logFlags are -log-level and -log-format.
type logFlags struct {
	level  zerolog.Level
	format string
	out    io.Writer // where the log goes: the flag set's output (stderr)
}

// register registers the flags on fs; the log goes to fs's output.
func (l *logFlags) register(fs *flag.FlagSet) {
	l.level, l.format, l.out = zerolog.InfoLevel, "text", fs.Output()
	fs.Func("log-level", "the least severe `LEVEL` of log messages written to stderr: debug, info, warn, error or off (default info)", func(s string) error {
		if s == "off" {
			l.level = zerolog.Disabled
			return nil
		}
		lv, err := zerolog.ParseLevel(s)
		if err != nil || s == "" || lv > zerolog.ErrorLevel || lv < zerolog.DebugLevel {
			return fmt.Errorf("unknown level %q (want debug, info, warn, error or off)", s)
		}
		l.level = lv
		return nil
	})
	fs.Func("log-format", "log `FORMAT` on stderr: text (a line per message) or json (an object per line) (default text)", func(s string) error {
		if s != "text" && s != "json" {
			return fmt.Errorf("unknown log format %q (want text or json)", s)
		}
		l.format = s
		return nil
	})
}

// logger returns the logger the flags describe, named by component
// ("serve", "node"...). Without register (a bench's federates), or with
// -log-level off, it logs nothing.
func (l *logFlags) logger(component string) zerolog.Logger {
	if l.out == nil || l.level == zerolog.Disabled {
		return zerolog.Nop()
	}
	var w io.Writer = l.out
	if l.format != "json" {
		w = zerolog.ConsoleWriter{Out: l.out, NoColor: true, TimeFormat: logTime, FormatLevel: func(i any) string {
			s, _ := i.(string)
			return strings.ToUpper(s)
		}}
	}
	// The time in milliseconds, UTC, set here rather than through
	// zerolog's package-level time format.
	stamp := zerolog.HookFunc(func(e *zerolog.Event, _ zerolog.Level, _ string) {
		e.Str(zerolog.TimestampFieldName, time.Now().UTC().Format(logTime))
	})
	return zerolog.New(w).Level(l.level).Hook(stamp).With().Str("cmd", component).Logger()
}

// logTime is the logs' time format: RFC 3339 with milliseconds.
const logTime = "2006-01-02T15:04:05.000Z07:00"

// logf adapts a logger to the printf-style hooks of the daemon's parts
// (fedpro.Config.Logf, session.Config.Logf): each line an info message.
func logf(log zerolog.Logger) func(format string, args ...any) {
	return func(format string, args ...any) { log.Info().Msg(fmt.Sprintf(format, args...)) }
}
