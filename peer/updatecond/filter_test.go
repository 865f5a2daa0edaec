package updatecond

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/hla"
)

// A step of a scripted trace: the value offered at a moment.
type step struct {
	at      time.Duration
	v       any
	logical float64
	hasLT   bool
}

// frames spaces values dt apart, starting at 0.
func frames(dt time.Duration, values ...any) []step {
	out := make([]step, len(values))
	for i, v := range values {
		out[i] = step{at: time.Duration(i) * dt, v: v}
	}
	return out
}

const frame = time.Second / 60

func vec(x, y, z float64) map[string]any { return map[string]any{"X": x, "Y": y, "Z": z} }

func pol(th Threshold) Policy { return Policy{Threshold: th} }

var (
	rel  = func(p float64) Threshold { return Threshold{Kind: Relative, Value: p} }
	abs  = func(v float64) Threshold { return Threshold{Kind: Absolute, Value: v} }
	none = Threshold{Kind: None}
)

// TestTraces runs scripted value traces through one attribute and checks
// exactly which values are sent: want has one mark per step, S for sent
// and . for suppressed.
func TestTraces(t *testing.T) {
	tests := []struct {
		name   string
		class  string // default Vehicle
		attr   string
		policy Policy // for Class.Attribute; zero: defaults
		trace  []step
		want   string
	}{
		// Ramps: 2% of the last sent value, so the gap grows with it.
		{name: "ramp/default", attr: "Speed",
			trace: frames(frame, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0),
			want:  "S.S..S..S"},
		{name: "ramp/absolute", attr: "Speed", policy: pol(abs(1)),
			trace: frames(frame, 0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0),
			want:  "S...S...S"},
		{name: "ramp/none", attr: "Speed", policy: pol(none),
			trace: frames(frame, 100.0, 100.0, 100.001, 100.001, 100.002),
			want:  "S.S.S"},
		{name: "ramp/relative-from-zero", attr: "Speed",
			trace: frames(frame, 0.0, 0.001, 0.001, 0.00101, 0.0011),
			want:  "SS..S"},
		{name: "ramp/negative", attr: "Speed",
			trace: frames(frame, -100.0, -101.0, -102.0, -98.0),
			want:  "S.SS"},
		// Steps: one jump, then a plateau at the new value.
		{name: "step/up", attr: "Speed",
			trace: frames(frame, 50.0, 50.0, 50.0, 80.0, 80.0, 80.0),
			want:  "S..S.."},
		{name: "step/small", attr: "Speed", policy: pol(rel(10)),
			trace: frames(frame, 50.0, 54.0, 54.0, 56.0, 56.0),
			want:  "S..S."},
		// Noise below the threshold around a steady value.
		{name: "noise/below", attr: "Speed",
			trace: frames(frame, 100.0, 101.0, 99.0, 100.5, 99.2, 101.9, 98.1, 102.5, 102.0),
			want:  "S......S."},
		{name: "noise/absolute", attr: "Speed", policy: pol(abs(0.5)),
			trace: frames(frame, 10.0, 10.2, 9.8, 10.4, 10.6, 10.3, 10.1),
			want:  "S...S.S"},
		// Plateau: a change below the threshold that holds is sent after
		// MaxUnchanged (default 5 s), counted from its first offer.
		{name: "plateau/default", attr: "Speed",
			trace: frames(time.Second, 100.0, 101.0, 101.0, 101.0, 101.0, 101.0, 101.0, 101.0),
			want:  "S.....S."},
		{name: "plateau/restarts", attr: "Speed",
			trace: frames(time.Second, 100.0, 101.0, 101.0, 101.0, 100.5, 100.5, 100.5, 100.5, 100.5, 100.5),
			want:  "S........S"},
		{name: "plateau/custom", attr: "Speed", policy: Policy{MaxUnchanged: 2 * time.Second},
			trace: frames(time.Second, 100.0, 101.0, 101.0, 101.0, 101.0),
			want:  "S..S."},
		{name: "plateau/off", attr: "Speed", policy: Policy{MaxUnchanged: Off, Heartbeat: Off},
			trace: frames(time.Minute, 100.0, 101.0, 101.0, 101.0, 101.0),
			want:  "S...."},
		{name: "plateau/back-to-sent", attr: "Speed",
			trace: frames(time.Second, 100.0, 101.0, 101.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0),
			want:  "S........"},
		// Records: each numeric field against its own last sent value.
		{name: "record/one-field", attr: "Position",
			trace: frames(frame, vec(1000, 2000, 5), vec(1000, 2000, 5.05), vec(1000, 2000, 5.25), vec(1000, 2000, 5.25), vec(1015, 2000, 5.25), vec(1021, 2000, 5.25)),
			want:  "S.S..S"},
		{name: "record/absolute", attr: "Position", policy: pol(abs(1)),
			trace: frames(frame, vec(0, 0, 0), vec(0.5, 0.5, 0.5), vec(0.5, 0.5, 1), vec(0.5, 0.5, 1.5)),
			want:  "S.S."},
		{name: "record/plateau", attr: "Position",
			trace: frames(2*time.Second, vec(100, 100, 100), vec(100, 100, 101), vec(100, 100, 101), vec(100, 100, 101), vec(100, 100, 101)),
			want:  "S...S"},
		// Arrays, element by element.
		{name: "array/element", attr: "Orientation",
			trace: frames(frame, []float64{10, 20, 30}, []float64{10, 20, 30.25}, []float64{10.125, 20, 30}, []float64{10, 20.5, 30}, []float64{10, 20.5, 30}),
			want:  "S..S."},
		// Integers: the same thresholds, exactly.
		{name: "integer/relative", attr: "Fuel",
			trace: frames(frame, 1000, 1015, 985, 1020, 1020, 1000, 999),
			want:  "S..S..S"},
		{name: "integer/extremes", attr: "Fuel", policy: pol(abs(1e9)),
			trace: frames(frame, math.MinInt32, math.MaxInt32, math.MaxInt32, math.MinInt32+5),
			want:  "SS.S"},
		{name: "unsigned", attr: "Odometer",
			trace: frames(frame, 0, 1, 1, 2, 65535, 65000, 64000),
			want:  "SS.SS.S"},
		{name: "float32", class: "Tank", attr: "Turret",
			trace: frames(frame, float32(90), float32(91), float32(92), float32(92)),
			want:  "S.S."},
		// Not numbers: any change is sent, whatever the threshold.
		{name: "string", attr: "Callsign", policy: pol(abs(1000)),
			trace: frames(frame, "Alpha", "Alpha", "Alpha1", "Alpha1", "Bravo"),
			want:  "S.S.S"},
		{name: "enum", attr: "Mode",
			trace: frames(frame, "Idle", "Idle", "Moving", "Moving", "Stopped", "Idle"),
			want:  "S.S.SS"},
		{name: "boolean", attr: "Damaged",
			trace: frames(frame, false, false, true, true, false),
			want:  "S.S.S"},
		{name: "opaque", attr: "Payload",
			trace: frames(frame, []byte{1, 2}, []byte{1, 2}, []byte{1, 3}, []byte{1, 3, 0}),
			want:  "S.SS"},
		{name: "variant", attr: "Status",
			trace: frames(frame,
				map[string]any{"Mode": "Moving", "Heading": 100.0},
				map[string]any{"Mode": "Moving", "Heading": 101.0},
				map[string]any{"Mode": "Moving", "Heading": 103.0},
				map[string]any{"Mode": "Stopped", "Since": 103.0},
				map[string]any{"Mode": "Idle"},
				map[string]any{"Mode": "Idle"}),
			want: "S.SSS."},
		// A data type the codec cannot handle is compared octet by octet.
		{name: "unsupported-encoding", attr: "Legacy",
			trace: frames(frame, rawBytes{1, 2, 3}, rawBytes{1, 2, 3}, rawBytes{1, 2, 4}),
			want:  "S.S"},
		// Values that do not decode are always sent.
		{name: "undecodable", attr: "Speed",
			trace: frames(frame, 100.0, rawBytes{1, 2, 3}, rawBytes{1, 2, 3}, 100.0, 100.5, 100.5),
			want:  "SSSS.."},
		{name: "undecodable/first", attr: "Mode",
			trace: frames(frame, rawBytes{0, 0, 0, 9}, "Idle", "Idle"),
			want:  "SS."},
		{name: "nan", attr: "Speed",
			trace: frames(frame, 1.0, math.NaN(), math.NaN(), math.Inf(1), math.Inf(1), 5.0),
			want:  "SS.S.S"},
		// Heartbeat by wall time: sent though unchanged.
		{name: "heartbeat/default", attr: "Speed",
			trace: frames(10*time.Second, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0),
			want:  "S.....S.....S"},
		{name: "heartbeat/custom", attr: "Callsign", policy: Policy{Heartbeat: 2 * time.Second},
			trace: frames(time.Second, "A", "A", "A", "B", "B", "B", "B"),
			want:  "S.SS.S."},
		{name: "heartbeat/restarts-on-send", attr: "Speed", policy: Policy{Heartbeat: 3 * time.Second, MaxUnchanged: Off},
			trace: frames(time.Second, 10.0, 10.0, 20.0, 20.0, 20.0, 20.1, 20.1, 20.1),
			want:  "S.S..S.."},
		{name: "heartbeat/off", attr: "Speed", policy: Policy{Heartbeat: Off},
			trace: frames(time.Hour, 7.0, 7.0, 7.0),
			want:  "S.."},
		// Heartbeat by logical time: wall time no longer counts.
		{name: "heartbeat/logical", attr: "Speed", policy: Policy{HeartbeatLogical: 10, MaxUnchanged: Off},
			trace: []step{
				{at: 0, v: 7.0, logical: 0, hasLT: true},
				{at: 2 * time.Minute, v: 7.0, logical: 4, hasLT: true},
				{at: 4 * time.Minute, v: 7.0, logical: 9.5, hasLT: true},
				{at: 6 * time.Minute, v: 7.0, logical: 10, hasLT: true},
				{at: 8 * time.Minute, v: 7.1, logical: 15, hasLT: true},
				{at: 9 * time.Minute, v: 7.0, logical: 20, hasLT: true},
				{at: 10 * time.Minute, v: 7.0, logical: 25, hasLT: true},
			},
			want: "S..S.S."},
		{name: "heartbeat/logical-falls-back-to-wall", attr: "Speed", policy: Policy{HeartbeatLogical: 10, Heartbeat: time.Second},
			trace: []step{
				{at: 0, v: 7.0},
				{at: 2 * time.Second, v: 7.0},
				{at: 3 * time.Second, v: 7.0, logical: 100, hasLT: true},
				{at: 9 * time.Second, v: 7.0, logical: 105, hasLT: true},
				{at: 10 * time.Second, v: 7.0, logical: 110, hasLT: true},
			},
			want: "SSS.S"},
	}
	fx := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class := tt.class
			if class == "" {
				class = "Vehicle"
			}
			cfg := Config{}
			if tt.policy != (Policy{}) {
				cfg.Attributes = map[string]Policy{class + "." + tt.attr: tt.policy}
			}
			f := fx.filter(t, cfg)
			cls := fx.class(t, class)
			a := fx.attr(t, class, tt.attr)
			var got strings.Builder
			for _, s := range tt.trace {
				vals := hla.AttributeValues{a.Handle: fx.encode(t, a, s.v)}
				out := f.Filter(obj(1), cls.Handle, vals, Now{Wall: s.at, Logical: s.logical, HasLogical: s.hasLT})
				if _, ok := out[a.Handle]; ok {
					got.WriteByte('S')
				} else {
					got.WriteByte('.')
				}
			}
			if got.String() != tt.want {
				t.Errorf("sends\n got %s\nwant %s", got.String(), tt.want)
			}
			st := f.Stats()
			sent := uint64(strings.Count(tt.want, "S"))
			if st.Offered != uint64(len(tt.trace)) || st.Sent != sent || st.Suppressed != st.Offered-sent {
				t.Errorf("stats %+v, want %d offered, %d sent", st, len(tt.trace), sent)
			}
		})
	}
}

// TestStatsReasons checks what each counter counts.
func TestStatsReasons(t *testing.T) {
	fx := newFixture(t)
	f := fx.filter(t, Config{})
	cls := fx.class(t, "Vehicle")
	a := fx.attr(t, "Vehicle", "Speed")
	offer := func(at time.Duration, v any) {
		f.Filter(obj(1), cls.Handle, hla.AttributeValues{a.Handle: fx.encode(t, a, v)}, Now{Wall: at})
	}
	offer(0, 100.0)                   // first
	offer(time.Second, 101.0)         // suppressed, starts holding
	offer(6*time.Second, 101.0)       // held
	offer(70*time.Second, 101.0)      // heartbeat
	offer(71*time.Second, rawBytes{}) // undecodable
	offer(72*time.Second, 200.0)      // changed after undecodable
	offer(73*time.Second, 250.0)      // threshold
	want := Stats{Offered: 7, Sent: 6, Suppressed: 1, Undecodable: 1, Heartbeats: 1, Held: 1, Instances: 1}
	if got := f.Stats(); got != want {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
}

// TestFilterResult checks the three shapes of Filter's result, and that
// the Filter keeps none of the caller's buffers.
func TestFilterResult(t *testing.T) {
	fx := newFixture(t)
	f := fx.filter(t, Config{})
	cls := fx.class(t, "Vehicle")
	speed, fuel, mode := fx.attr(t, "Vehicle", "Speed"), fx.attr(t, "Vehicle", "Fuel"), fx.attr(t, "Vehicle", "Mode")
	vals := hla.AttributeValues{
		speed.Handle: fx.encode(t, speed, 100.0),
		fuel.Handle:  fx.encode(t, fuel, 1000),
		mode.Handle:  fx.encode(t, mode, "Idle"),
	}
	out := f.Filter(obj(1), cls.Handle, vals, Now{})
	if reflect.ValueOf(out).Pointer() != reflect.ValueOf(vals).Pointer() {
		t.Errorf("everything passes: got a new map, want the caller's")
	}
	if out := f.Filter(obj(1), cls.Handle, vals, Now{Wall: frame}); out != nil {
		t.Errorf("nothing passes: got %v, want nil", out)
	}
	// Reuse the caller's buffers in place: Speed to 200 (sent), Fuel
	// unchanged.
	copy(vals[speed.Handle], fx.encode(t, speed, 200.0))
	out = f.Filter(obj(1), cls.Handle, vals, Now{Wall: 2 * frame})
	if len(out) != 1 || out[speed.Handle] == nil {
		t.Fatalf("got %v, want Speed alone", out)
	}
	if reflect.ValueOf(out).Pointer() == reflect.ValueOf(vals).Pointer() {
		t.Errorf("partial result is the caller's map")
	}
	// If the Filter had kept the caller's buffer, 200 → 201 would look
	// unchanged; it must compare against its own copy of 200.
	copy(vals[speed.Handle], fx.encode(t, speed, 210.0))
	if out := f.Filter(obj(1), cls.Handle, hla.AttributeValues{speed.Handle: vals[speed.Handle]}, Now{Wall: 3 * frame}); len(out) != 1 {
		t.Errorf("200 → 210 (5%%) not sent: %v", out)
	}
	if out := f.Filter(obj(1), cls.Handle, nil, Now{}); out != nil {
		t.Errorf("nil values: got %v", out)
	}
}

// TestInstances checks that state is per instance and that Forget drops
// it.
func TestInstances(t *testing.T) {
	fx := newFixture(t)
	f := fx.filter(t, Config{})
	cls := fx.class(t, "Vehicle")
	a := fx.attr(t, "Vehicle", "Speed")
	v := hla.AttributeValues{a.Handle: fx.encode(t, a, 100.0)}
	for i := uint64(1); i <= 3; i++ {
		if out := f.Filter(obj(i), cls.Handle, v, Now{}); len(out) != 1 {
			t.Fatalf("first value of instance %d not sent", i)
		}
	}
	if out := f.Filter(obj(2), cls.Handle, v, Now{Wall: frame}); len(out) != 0 {
		t.Fatalf("unchanged value of instance 2 sent")
	}
	if n := f.Stats().Instances; n != 3 {
		t.Fatalf("instances %d, want 3", n)
	}
	f.Forget(obj(2))
	f.Forget(obj(99)) // unknown: no effect
	if n := f.Stats().Instances; n != 2 {
		t.Fatalf("instances after Forget %d, want 2", n)
	}
	if out := f.Filter(obj(2), cls.Handle, v, Now{Wall: 2 * frame}); len(out) != 1 {
		t.Errorf("after Forget, the first value is not sent")
	}
	if out := f.Filter(obj(1), cls.Handle, v, Now{Wall: 2 * frame}); len(out) != 0 {
		t.Errorf("Forget(2) changed instance 1")
	}
}

// TestUnknownHandles checks that what the FDD does not describe is sent
// and counted, and leaves no state.
func TestUnknownHandles(t *testing.T) {
	fx := newFixture(t)
	f := fx.filter(t, Config{})
	vehicle, tank := fx.class(t, "Vehicle"), fx.class(t, "Tank")
	turret := fx.attr(t, "Tank", "Turret")
	v := hla.AttributeValues{turret.Handle: []byte{0, 0, 0, 0}}
	for i := 0; i < 2; i++ {
		if out := f.Filter(obj(1), vehicle.Handle, v, Now{}); len(out) != 1 {
			t.Errorf("attribute unknown to the class: not sent")
		}
		if out := f.Filter(obj(2), hla.ObjectClassHandle(12345), v, Now{}); len(out) != 1 {
			t.Errorf("unknown class: not sent")
		}
	}
	st := f.Stats()
	if st.Undecodable != 4 || st.Sent != 4 || st.Instances != 0 {
		t.Errorf("stats %+v, want 4 undecodable, 4 sent, no instances", st)
	}
	if out := f.Filter(obj(3), tank.Handle, v, Now{}); len(out) != 1 {
		t.Errorf("known attribute: first value not sent")
	}
}
