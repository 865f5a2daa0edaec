package updatecond

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxConfigBytes bounds what LoadConfig reads.
const MaxConfigBytes = 1 << 20

// LoadConfig reads a Config from JSON:
//
//	{
//	  "default": {"threshold": "2%", "heartbeat": "60s", "maxUnchanged": "5s"},
//	  "attributes": {
//	    "Vehicle.Position": {"threshold": 0.5},
//	    "Vehicle.Callsign": {"heartbeat": "off"},
//	    "Vehicle.Tank.Turret": {"threshold": "none", "heartbeatLogical": 10}
//	  }
//	}
//
// Both top-level keys and every policy key are optional; an absent key
// inherits (see Config). The values:
//
//   - threshold: "N%" (Relative, N percent of the last sent value), a
//     number or a numeric string (Absolute), or "none" (every change).
//   - heartbeat, maxUnchanged: a Go duration string ("60s", "1m30s",
//     "500ms"), a number of seconds, or "off".
//   - heartbeatLogical: a positive number of logical time units, or "off".
//
// Unknown keys, zero or negative durations, and trailing data are errors
// (wrapping ErrInvalidConfig) that name the offending key. Class and
// attribute names are checked by New, against an FDD.
func LoadConfig(r io.Reader) (Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxConfigBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("%w: reading: %w", ErrInvalidConfig, err)
	}
	if len(data) > MaxConfigBytes {
		return Config{}, fmt.Errorf("%w: more than %d bytes", ErrInvalidConfig, MaxConfigBytes)
	}
	var f struct {
		Default    *filePolicy            `json:"default"`
		Attributes map[string]*filePolicy `json:"attributes"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Config{}, fmt.Errorf("%w: %s", ErrInvalidConfig, jsonErr(data, dec.InputOffset(), err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, fmt.Errorf("%w: data after the top-level object", ErrInvalidConfig)
	}
	var cfg Config
	var errs []error
	if f.Default != nil {
		p, err := f.Default.policy()
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: default: %v", ErrInvalidConfig, err))
		}
		cfg.Default = p
	}
	if f.Attributes != nil {
		cfg.Attributes = make(map[string]Policy, len(f.Attributes))
		for _, name := range slices.Sorted(maps.Keys(f.Attributes)) {
			fp := f.Attributes[name]
			if fp == nil {
				errs = append(errs, fmt.Errorf("%w: attributes[%q]: want an object, got null", ErrInvalidConfig, name))
				continue
			}
			p, err := fp.policy()
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: attributes[%q]: %v", ErrInvalidConfig, name, err))
			}
			cfg.Attributes[name] = p
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, nil
}

// filePolicy is a Policy as the file writes it.
type filePolicy struct {
	Threshold        json.RawMessage `json:"threshold"`
	Heartbeat        json.RawMessage `json:"heartbeat"`
	HeartbeatLogical json.RawMessage `json:"heartbeatLogical"`
	MaxUnchanged     json.RawMessage `json:"maxUnchanged"`
}

func (fp *filePolicy) policy() (Policy, error) {
	var p Policy
	// cmp.Or: the first field's error, in this order.
	if err := cmp.Or(
		parseField("threshold", fp.Threshold, &p.Threshold, parseThreshold),
		parseField("heartbeat", fp.Heartbeat, &p.Heartbeat, parseDuration),
		parseField("heartbeatLogical", fp.HeartbeatLogical, &p.HeartbeatLogical, parseLogical),
		parseField("maxUnchanged", fp.MaxUnchanged, &p.MaxUnchanged, parseDuration),
	); err != nil {
		return p, err
	}
	if msg := p.problem(); msg != "" {
		return p, errors.New(msg)
	}
	return p, nil
}

// scalar reads a JSON string or number: s is the string, or the number's
// text with isNum set.
func scalar(raw json.RawMessage) (s string, isNum bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, err
		}
		return strings.TrimSpace(s), false, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", false, fmt.Errorf("want a string or a number, got %s", raw)
	}
	return string(n), true, nil
}

func parseFloat(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// parseField parses the field name, raw, with parse into *dst when the
// field is present.
func parseField[T any](name string, raw json.RawMessage, dst *T, parse func(json.RawMessage) (T, error)) error {
	if raw == nil {
		return nil
	}
	v, err := parse(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	*dst = v
	return nil
}

func parseThreshold(raw json.RawMessage) (Threshold, error) {
	s, _, err := scalar(raw)
	if err != nil {
		return Threshold{}, err
	}
	if strings.EqualFold(s, "none") {
		return Threshold{Kind: None}, nil
	}
	kind := Absolute
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		kind, s = Relative, strings.TrimSpace(pct)
	}
	v, ok := parseFloat(s)
	if !ok || v < 0 {
		return Threshold{}, fmt.Errorf("want \"none\", \"N%%\" or a number >= 0, got %s", raw)
	}
	return Threshold{Kind: kind, Value: v}, nil
}

func parseDuration(raw json.RawMessage) (time.Duration, error) {
	s, isNum, err := scalar(raw)
	if err != nil {
		return 0, err
	}
	if !isNum && strings.EqualFold(s, "off") {
		return Off, nil
	}
	var d time.Duration
	if isNum {
		v, ok := parseFloat(s)
		if !ok || v*float64(time.Second) >= math.MaxInt64 {
			return 0, fmt.Errorf("%s seconds is out of range", s)
		}
		d = time.Duration(v * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("want a duration (\"60s\"), a number of seconds or \"off\", got %s", raw)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s must be positive (use \"off\" to turn it off)", raw)
	}
	return d, nil
}

func parseLogical(raw json.RawMessage) (float64, error) {
	s, isNum, err := scalar(raw)
	if err != nil {
		return 0, err
	}
	if !isNum && strings.EqualFold(s, "off") {
		return Off, nil
	}
	v, ok := parseFloat(s)
	if !ok || v <= 0 {
		return 0, fmt.Errorf("want a positive number of logical time units or \"off\", got %s", raw)
	}
	return v, nil
}

// jsonErr locates a decoding error by line: at the offset encoding/json
// gives, or else where the decoder stopped (off).
func jsonErr(data []byte, off int64, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if errors.Is(err, io.EOF) || off < 0 || off > int64(len(data)) {
		return err.Error()
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Sprintf("line %d: %v", line, err)
}
