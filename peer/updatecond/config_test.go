package updatecond

import (
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
)

// TestInheritance checks how a policy is built: built-in defaults, then
// Config.Default, then the entries for the attribute on the class and
// its ancestors, root first, field by field.
func TestInheritance(t *testing.T) {
	fx := newFixture(t)
	cfg := Config{
		Default: Policy{Heartbeat: 10 * time.Second},
		Attributes: map[string]Policy{
			"Vehicle.Speed":                           {Threshold: abs(10)},
			"HLAobjectRoot.Vehicle.Tank.Speed":        {MaxUnchanged: time.Second},
			"HeavyTank.Speed":                         {Threshold: none, Heartbeat: Off},
			"Tank.Turret":                             {HeartbeatLogical: 5},
			"Vehicle.Tank.HLAprivilegeToDeleteObject": {Heartbeat: time.Hour},
		},
	}
	f := fx.filter(t, cfg)
	def := Policy{Threshold: rel(DefaultPercent), Heartbeat: 10 * time.Second, HeartbeatLogical: Off, MaxUnchanged: DefaultMaxUnchanged}
	with := func(change func(*Policy)) Policy {
		p := def
		change(&p)
		return p
	}
	tests := []struct {
		class, attr string
		want        Policy
	}{
		{"Vehicle", "Fuel", def},
		{"Vehicle", "HLAprivilegeToDeleteObject", def},
		{"HLAobjectRoot", "HLAprivilegeToDeleteObject", def},
		{"Vehicle", "Speed", with(func(p *Policy) { p.Threshold = abs(10) })},
		{"Truck", "Speed", with(func(p *Policy) { p.Threshold = abs(10) })},
		{"Tank", "Speed", with(func(p *Policy) { p.Threshold = abs(10); p.MaxUnchanged = time.Second })},
		{"HeavyTank", "Speed", with(func(p *Policy) { p.Threshold = none; p.MaxUnchanged = time.Second; p.Heartbeat = Off })},
		{"Tank", "Turret", with(func(p *Policy) { p.HeartbeatLogical = 5 })},
		{"HeavyTank", "Turret", with(func(p *Policy) { p.HeartbeatLogical = 5 })},
		{"Tank", "HLAprivilegeToDeleteObject", with(func(p *Policy) { p.Heartbeat = time.Hour })},
		{"HeavyTank", "HLAprivilegeToDeleteObject", with(func(p *Policy) { p.Heartbeat = time.Hour })},
		{"Truck", "HLAprivilegeToDeleteObject", def},
	}
	for _, tt := range tests {
		got, ok := f.Policy(fx.class(t, tt.class).Handle, fx.attr(t, tt.class, tt.attr).Handle)
		if !ok || got != tt.want {
			t.Errorf("%s.%s: got %+v (%v), want %+v", tt.class, tt.attr, got, ok, tt.want)
		}
	}
	if _, ok := f.Policy(fx.class(t, "Vehicle").Handle, fx.attr(t, "Tank", "Turret").Handle); ok {
		t.Errorf("Vehicle has a policy for Tank's own attribute")
	}

	// The inherited policy is the one applied: Truck.Speed has an
	// absolute threshold of 10.
	truck := fx.class(t, "Truck")
	speed := fx.attr(t, "Truck", "Speed")
	var got strings.Builder
	for i, v := range []float64{1000, 1009, 1011, 1020} {
		out := f.Filter(obj(1), truck.Handle, map[fomxml.AttributeHandle][]byte{speed.Handle: fx.encode(t, speed, v)}, Now{Wall: time.Duration(i) * frame})
		got.WriteString(map[bool]string{true: "S", false: "."}[len(out) == 1])
	}
	if got.String() != "S.S." {
		t.Errorf("Truck.Speed sends %s, want S.S.", got.String())
	}
}

// TestDefaultPolicy pins the built-in defaults.
func TestDefaultPolicy(t *testing.T) {
	want := Policy{Threshold: Threshold{Kind: Relative, Value: 2}, Heartbeat: 60 * time.Second, HeartbeatLogical: Off, MaxUnchanged: 5 * time.Second}
	if got := DefaultPolicy(); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestNewErrors checks that bad configs are refused, every problem
// reported, each with its sentinel.
func TestNewErrors(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name string
		cfg  Config
		errs []error
		msgs []string
	}{
		{"unknown class", Config{Attributes: map[string]Policy{"Plane.Speed": {}}},
			[]error{ErrUnknownClass}, []string{`unknown object class "Plane" (policy "Plane.Speed")`}},
		{"unknown attribute", Config{Attributes: map[string]Policy{"Vehicle.Turret": {}}},
			[]error{ErrUnknownAttribute}, []string{`unknown attribute "Turret" of class HLAobjectRoot.Vehicle`}},
		{"attribute of a subclass", Config{Attributes: map[string]Policy{"Truck.Turret": {}}},
			[]error{ErrUnknownAttribute}, nil},
		{"no attribute", Config{Attributes: map[string]Policy{"Vehicle": {}}},
			[]error{ErrInvalidConfig}, []string{`want "Class.Attribute"`}},
		{"empty attribute", Config{Attributes: map[string]Policy{"Vehicle.": {}}},
			[]error{ErrInvalidConfig}, nil},
		{"empty class", Config{Attributes: map[string]Policy{".Speed": {}}},
			[]error{ErrInvalidConfig}, nil},
		{"duplicate", Config{Attributes: map[string]Policy{"Vehicle.Speed": {}, "HLAobjectRoot.Vehicle.Speed": {}}},
			[]error{ErrInvalidConfig}, []string{`policies "HLAobjectRoot.Vehicle.Speed" and "Vehicle.Speed" name the same attribute`}},
		{"negative threshold", Config{Default: Policy{Threshold: abs(-1)}},
			[]error{ErrInvalidConfig}, []string{"updatecond: invalid config: default: threshold -1 must be a finite number >= 0"}},
		{"NaN threshold", Config{Attributes: map[string]Policy{"Vehicle.Speed": {Threshold: rel(math.NaN())}}},
			[]error{ErrInvalidConfig}, nil},
		{"infinite threshold", Config{Attributes: map[string]Policy{"Vehicle.Speed": {Threshold: abs(math.Inf(1))}}},
			[]error{ErrInvalidConfig}, nil},
		{"value without kind", Config{Default: Policy{Threshold: Threshold{Value: 3}}},
			[]error{ErrInvalidConfig}, []string{"takes no value"}},
		{"value with none", Config{Default: Policy{Threshold: Threshold{Kind: None, Value: 3}}},
			[]error{ErrInvalidConfig}, nil},
		{"bad kind", Config{Default: Policy{Threshold: Threshold{Kind: 9}}},
			[]error{ErrInvalidConfig}, []string{"unknown threshold kind 9"}},
		{"NaN logical heartbeat", Config{Default: Policy{HeartbeatLogical: math.NaN()}},
			[]error{ErrInvalidConfig}, nil},
		{"all at once", Config{
			Default:    Policy{Threshold: abs(-1)},
			Attributes: map[string]Policy{"Plane.Speed": {}, "Vehicle.Turret": {}, "Vehicle.Speed": {}}},
			[]error{ErrInvalidConfig, ErrUnknownClass, ErrUnknownAttribute}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(fx.fdd, tt.cfg)
			if err == nil {
				t.Fatalf("no error (filter %v)", f)
			}
			for _, want := range tt.errs {
				if !errors.Is(err, want) {
					t.Errorf("error %q is not %v", err, want)
				}
			}
			for _, msg := range tt.msgs {
				if !strings.Contains(err.Error(), msg) {
					t.Errorf("error %q does not say %q", err, msg)
				}
			}
		})
	}
	if _, err := New(nil, Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("nil FDD: %v", err)
	}
}

// TestLoadConfig reads testdata/policy.json and checks the Config and the
// policies it gives.
func TestLoadConfig(t *testing.T) {
	file, err := os.Open("testdata/policy.json")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cfg, err := LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Default: Policy{Threshold: rel(2), Heartbeat: time.Minute, MaxUnchanged: 5 * time.Second},
		Attributes: map[string]Policy{
			"Vehicle.Position":    {Threshold: abs(0.5)},
			"Vehicle.Callsign":    {Heartbeat: Off},
			"Vehicle.Tank.Turret": {Threshold: none, HeartbeatLogical: 10},
			"HeavyTank.Speed":     {Threshold: rel(5), Heartbeat: 30 * time.Second, MaxUnchanged: Off},
		},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got  %+v\nwant %+v", cfg, want)
	}
	fx := newFixture(t)
	f := fx.filter(t, cfg)
	p, _ := f.Policy(fx.class(t, "HeavyTank").Handle, fx.attr(t, "HeavyTank", "Turret").Handle)
	if p.Threshold != none || p.HeartbeatLogical != 10 || p.Heartbeat != time.Minute {
		t.Errorf("HeavyTank.Turret: %+v", p)
	}
}

func TestLoadConfigForms(t *testing.T) {
	tests := []struct {
		in   string
		want Policy
	}{
		{`{}`, Policy{}},
		{`{"threshold": "2.5%"}`, Policy{Threshold: rel(2.5)}},
		{`{"threshold": " 3 % "}`, Policy{Threshold: rel(3)}},
		{`{"threshold": 0.25}`, Policy{Threshold: abs(0.25)}},
		{`{"threshold": "0.25"}`, Policy{Threshold: abs(0.25)}},
		{`{"threshold": 0}`, Policy{Threshold: abs(0)}},
		{`{"threshold": "NONE"}`, Policy{Threshold: none}},
		{`{"heartbeat": 1.5}`, Policy{Heartbeat: 1500 * time.Millisecond}},
		{`{"heartbeat": "1m30s"}`, Policy{Heartbeat: 90 * time.Second}},
		{`{"heartbeat": "off", "maxUnchanged": "Off", "heartbeatLogical": "off"}`, Policy{Heartbeat: Off, MaxUnchanged: Off, HeartbeatLogical: Off}},
		{`{"heartbeatLogical": 0.5}`, Policy{HeartbeatLogical: 0.5}},
		{`{"heartbeatLogical": "2"}`, Policy{HeartbeatLogical: 2}},
	}
	for _, tt := range tests {
		cfg, err := LoadConfig(strings.NewReader(`{"default": ` + tt.in + `}`))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if cfg.Default != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.in, cfg.Default, tt.want)
		}
	}
	if cfg, err := LoadConfig(strings.NewReader(`{}`)); err != nil || cfg.Attributes != nil {
		t.Errorf("empty file: %+v, %v", cfg, err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{``, "EOF"},
		{`[]`, "cannot unmarshal"},
		{"{\n\"default\": {\"threshold\": }}", "line 2"},
		{`{"defaults": {}}`, `unknown field "defaults"`},
		{`{"default": {"treshold": "2%"}}`, `unknown field "treshold"`},
		{`{"default": {}} {}`, "data after the top-level object"},
		{`{"default": {"threshold": "abc"}}`, `updatecond: invalid config: default: threshold: want "none", "N%" or a number >= 0, got "abc"`},
		{`{"default": {"threshold": "-2%"}}`, "threshold"},
		{`{"default": {"threshold": true}}`, "want a string or a number"},
		{`{"default": {"threshold": "NaN"}}`, "threshold"},
		{`{"default": {"heartbeat": "0s"}}`, `updatecond: invalid config: default: heartbeat: "0s" must be positive (use "off" to turn it off)`},
		{`{"default": {"heartbeat": -1}}`, "must be positive"},
		{`{"default": {"heartbeat": "soon"}}`, "want a duration"},
		{`{"default": {"heartbeat": 1e300}}`, "out of range"},
		{`{"default": {"maxUnchanged": "-5s"}}`, "maxUnchanged"},
		{`{"default": {"heartbeatLogical": 0}}`, "heartbeatLogical"},
		{`{"default": {"heartbeatLogical": "never"}}`, "heartbeatLogical"},
		{`{"attributes": {"Vehicle.Speed": null}}`, `attributes["Vehicle.Speed"]: want an object, got null`},
		{`{"attributes": {"A.b": {"threshold": "x"}, "C.d": {"heartbeat": "0s"}}}`, `attributes["A.b"]: threshold`},
		{`{"attributes": {"A.b": {"threshold": "x"}, "C.d": {"heartbeat": "0s"}}}`, `attributes["C.d"]: heartbeat`},
		{`{"attributes": []}`, "cannot unmarshal"},
		{`{"default": {}` + strings.Repeat(" ", MaxConfigBytes) + `}`, "more than"},
	}
	for _, tt := range tests {
		_, err := LoadConfig(strings.NewReader(tt.in))
		name := tt.in
		if len(name) > 60 {
			name = name[:60] + "..."
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: error %v is not ErrInvalidConfig", name, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %q does not say %q", name, err, tt.msg)
		}
	}
}
