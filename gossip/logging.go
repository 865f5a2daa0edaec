package gossip

import (
	"strings"

	"github.com/rs/zerolog"
)

// memberlistLog routes memberlist's standard-library log lines into the
// Cluster's zerolog.Logger, mapping memberlist's "[DEBUG]", "[INFO]",
// "[WARN]" and "[ERR]" prefixes to levels. With the zero Logger the
// lines go nowhere.
type memberlistLog struct{ log zerolog.Logger }

func (w memberlistLog) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	level := zerolog.DebugLevel
	for _, l := range []struct {
		prefix string
		level  zerolog.Level
	}{
		{"[DEBUG]", zerolog.DebugLevel},
		{"[INFO]", zerolog.InfoLevel},
		{"[WARN]", zerolog.WarnLevel},
		{"[ERR]", zerolog.ErrorLevel},
		{"[ERROR]", zerolog.ErrorLevel},
	} {
		if rest, ok := strings.CutPrefix(line, l.prefix); ok {
			level, line = l.level, strings.TrimSpace(rest)
			break
		}
	}
	line = strings.TrimPrefix(line, "memberlist: ")
	w.log.WithLevel(level).Str("component", "memberlist").Msg(line)
	return len(p), nil
}
