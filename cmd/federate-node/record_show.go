package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer/record"
)

// valueDecoder turns recorded values into data by the FDD's data types.
type valueDecoder struct {
	fdd *fomxml.FDD
	cd  *codec.Codec
}

// decode returns the event's values by name, each decoded by its data
// type; a value that does not decode (or whose type is unknown) shows as
// {"undecoded": HEX, "error": WHY}.
func (d *valueDecoder) decode(ev *record.Event) map[string]any {
	out := make(map[string]any, len(ev.Values))
	for _, v := range ev.Values {
		typ, err := d.dataType(ev, v.Name)
		var val any
		if err == nil {
			val, err = d.cd.Decode(typ, v.Data)
		}
		if err != nil {
			val = map[string]any{"undecoded": hex.EncodeToString(v.Data), "error": err.Error()}
		}
		out[v.Name] = jsonSafe(val)
	}
	return out
}

func (d *valueDecoder) dataType(ev *record.Event, name string) (string, error) {
	if d == nil || d.cd == nil {
		return "", errors.New("no FDD")
	}
	if ev.Kind == record.KindInteraction {
		c, ok := d.fdd.InteractionClass(ev.Class)
		if !ok {
			return "", fmt.Errorf("no interaction class %s", ev.Class)
		}
		for _, p := range c.AllParameters() {
			if p.Name == name {
				return p.DataType, nil
			}
		}
		return "", fmt.Errorf("%s has no parameter %s", ev.Class, name)
	}
	c, ok := d.fdd.ObjectClass(ev.Class)
	if !ok {
		return "", fmt.Errorf("no object class %s", ev.Class)
	}
	a, ok := c.Attribute(name)
	if !ok {
		return "", fmt.Errorf("%s has no attribute %s", ev.Class, name)
	}
	return a.DataType, nil
}

// jsonSafe replaces the floats JSON cannot hold (NaN, ±Inf) by strings.
func jsonSafe(v any) any {
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
	case []any:
		for i := range v {
			v[i] = jsonSafe(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = jsonSafe(v[k])
		}
	}
	return v
}

// showEvent is one line of "record show -json".
type showEvent struct {
	Kind     string         `json:"kind"`
	Time     *float64       `json:"time"`
	Order    string         `json:"order"`
	Federate string         `json:"federate"`
	Class    string         `json:"class"`
	Object   *string        `json:"object,omitempty"`
	Values   map[string]any `json:"values"`
}

// show returns ev as "record show -json" writes it. Time is null for a
// receive-order message.
func (d *valueDecoder) show(ev *record.Event) showEvent {
	s := showEvent{Kind: ev.Kind.String(), Order: "RO", Federate: ev.Federate, Class: ev.Class, Values: d.decode(ev)}
	if ev.TSO {
		s.Order = "TSO"
		if ev.HasTime {
			t := ev.Time
			s.Time = &t
		}
	}
	if ev.Kind != record.KindInteraction {
		o := ev.Object
		s.Object = &o
	}
	return s
}

func runRecordShow(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("record show", stdout, stderr)
	fs := cmd.FS
	asJSON := fs.Bool("json", false, "print one JSON object per event")
	pos, ok := cmd.Files(args, "usage: federate-node record show FILE [-json]", func(n int) bool { return n == 1 })
	if !ok {
		return 2
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return cmd.Fail(err)
	}
	defer f.Close()
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	err = showRecording(f, out, stderr, *asJSON)
	if err != nil {
		out.Flush()
		return cmd.Fail(err)
	}
	return 0
}

// showRecording prints every event of the recording in r, decoded
// through the recording's own FOM. It returns the error that ended
// reading early (a damaged file), nil at the clean end.
func showRecording(r io.Reader, out, stderr io.Writer, asJSON bool) error {
	rd, err := record.NewReader(r)
	if err != nil {
		return err
	}
	h := rd.Header()
	dec := &valueDecoder{}
	if fdd, err := h.FDD(); err != nil {
		fmt.Fprintf(stderr, "federate-node record show: values shown undecoded: %v\n", err)
	} else if cd, err := codec.New(fdd); err != nil {
		fmt.Fprintf(stderr, "federate-node record show: values shown undecoded: %v\n", err)
	} else {
		dec.fdd, dec.cd = fdd, cd
	}
	if !asJSON {
		var names []string
		for _, m := range h.Modules {
			names = append(names, m.Designator)
		}
		fmt.Fprintf(out, "recording of federation %s by %s, started %s, %s, modules: %s\n",
			h.Federation, h.Recorder, h.Started.UTC().Format(time.RFC3339), h.TimeRepresentation, strings.Join(names, ", "))
	}
	enc := json.NewEncoder(out)
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			if !asJSON {
				fmt.Fprintf(out, "end: %d events\n", rd.Events())
			}
			return nil
		}
		if err != nil {
			return err
		}
		s := dec.show(ev)
		if asJSON {
			if err := enc.Encode(s); err != nil {
				return err
			}
			continue
		}
		t := "-"
		if s.Time != nil {
			t = strconv.FormatFloat(*s.Time, 'g', -1, 64)
		}
		line := fmt.Sprintf("%s %s %s %s", t, s.Order, s.Kind, s.Class)
		if s.Object != nil {
			line += " " + strconv.Quote(*s.Object)
		}
		line += " from " + s.Federate
		if len(ev.Values) > 0 {
			var parts []string
			for _, v := range ev.Values {
				b, _ := json.Marshal(s.Values[v.Name])
				parts = append(parts, v.Name+"="+string(b))
			}
			line += ": " + strings.Join(parts, " ")
		}
		fmt.Fprintln(out, line)
	}
}
