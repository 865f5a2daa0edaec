package dis

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// hx turns hex written in groups, with comments after '#' on each line,
// into octets: PDUs below are laid out by hand, field by field, from
// IEEE 1278.1-1995 (5.3.3, 5.3.4) and 1278.1-2012 (7.2.2, 7.3.2, 7.3.3,
// 7.2.6), not by this package's encoder.
func hx(t testing.TB, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	if err != nil {
		t.Fatalf("bad hex: %v", err)
	}
	return b
}

// decodeHex decodes the annotated hex s (see hx), checking that it is a
// PDU of type P that encodes back to the same octets; it returns the PDU
// and the octets.
func decodeHex[P PDU](t *testing.T, s string) (P, []byte) {
	t.Helper()
	b := hx(t, s)
	p, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	pdu, ok := p.(P)
	if !ok {
		t.Fatalf("decoded a %T", p)
	}
	got, err := Encode(pdu)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b) {
		t.Errorf("encoded\n% x\nwant\n% x", got, b)
	}
	return pdu, b
}

// An Entity State PDU of 1278.1-1995 (version 6 header: two octets of
// padding after the length) with one articulation parameter.
const espduV6 = `
06 03 01 01          # version 6, exercise 3, type 1 (entity state), family 1
00 00 10 01          # timestamp 0x1001 (relative)
00 a0 00 00          # length 160 = 144 + 16, padding
00 01 00 02 00 2a    # entity ID site 1, application 2, entity 42
02 01                # force 2 (opposing), 1 articulation parameter
01 01 00 e1 01 02 03 00   # type: platform, land, USA (225), tank, 2, 3, 0
01 01 00 e1 01 02 04 00   # alternative type
3fc00000 c0000000 3e800000   # velocity 1.5, -2, 0.25
415854a640000000 c0934a0000000000 413e848000000000   # location 6378137, -1234.5, 2e6
3f000000 bf400000 40400000   # orientation psi 0.5, theta -0.75, phi 3
00 40 00 18          # appearance: bit 22 (power plant on), bits 3-4 = 3 (destroyed)
04 000000000000000000000000000000   # dead reckoning: algorithm 4 (RVW), 15 octets other
3fa00000 00000000 00000000   # linear acceleration 1.25, 0, 0
00000000 00000000 3dcccccd   # angular velocity 0, 0, 0.1
01 54 41 4e 4b 31 00 00 00 00 00 00   # marking: ASCII "TANK1"
00 00 00 05          # capabilities: ammunition supply and recovery
00 00 00 00 00 00 10 0b 42 c8 00 00 00 00 00 00   # articulated part: change 0, attached to 0, type 4107 (turret azimuth), value 100
`

func TestEntityStateV6(t *testing.T) {
	es, _ := decodeHex[*EntityState](t, espduV6)
	want := &EntityState{
		Header:        Header{Version: 6, Exercise: 3, Type: 1, Family: 1, Timestamp: 0x1001, Length: 160},
		ID:            EntityID{1, 2, 42},
		Force:         2,
		Type:          EntityType{1, 1, 225, 1, 2, 3, 0},
		AlternateType: EntityType{1, 1, 225, 1, 2, 4, 0},
		Velocity:      Vector{1.5, -2, 0.25},
		Location:      WorldCoordinates{6378137, -1234.5, 2e6},
		Orientation:   EulerAngles{0.5, -0.75, 3},
		Appearance:    1<<22 | 3<<3,
		DeadReckoning: DeadReckoning{Algorithm: DRRVW, LinearAcceleration: Vector{1.25, 0, 0}, AngularVelocity: Vector{0, 0, 0.1}},
		Marking:       NewMarking("TANK1"),
		Capabilities:  5,
		Parameters:    []VariableParameter{ArticulatedPart{ParameterType: 4107, Value: 100}.Param()},
	}
	if !reflect.DeepEqual(es, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", es, want)
	}
	if es.Marking.String() != "TANK1" {
		t.Errorf("marking %q", es.Marking.String())
	}
	ap, ok := es.Parameters[0].Articulated()
	if !ok || ap.ParameterType != 4107 || ap.Value != 100 {
		t.Errorf("articulated part %+v %v", ap, ok)
	}
}

// An Entity State PDU of 1278.1-2012 (version 7: PDU status after the
// length) with an articulated and an attached part.
const espduV7 = `
07 01 01 01          # version 7, exercise 1, type 1, family 1
7f ff ff ff          # timestamp, absolute
00 b0 02 00          # length 176 = 144 + 2*16, PDU status 2, padding
00 05 00 06 00 07    # entity 5.6.7
01 02                # force 1 (friendly), 2 variable parameters
01 02 00 e1 01 03 00 00   # type: platform, air, USA, 1, 3
00 00 00 00 00 00 00 00   # no alternative type
00000000 00000000 00000000
415854a640000000 0000000000000000 0000000000000000
00000000 00000000 00000000
00 00 00 00          # appearance 0
02 000000000000000000000000000000   # FPW
00000000 00000000 00000000
00000000 00000000 00000000
01 45 41 47 4c 45 00 00 00 00 00 00   # "EAGLE"
00 00 00 00
00 01 00 00 00 00 04 0b 3f 00 00 00 00 00 00 00   # articulated: change 1, type 1035 (rudder azimuth), 0.5
01 00 00 00 00 00 02 00 02 02 00 e1 01 01 00 00   # attached: station 512, store munition.air.USA.1.1
`

func TestEntityStateV7(t *testing.T) {
	b := hx(t, espduV7)
	p, err := DecodeExercise(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	es := p.(*EntityState)
	if es.Version != 7 || es.Status != 2 || es.ID != (EntityID{5, 6, 7}) || es.Marking.String() != "EAGLE" || es.DeadReckoning.Algorithm != DRFPW {
		t.Errorf("decoded %+v", es)
	}
	if len(es.Parameters) != 2 {
		t.Fatalf("%d parameters", len(es.Parameters))
	}
	ap, ok := es.Parameters[0].Articulated()
	if !ok || ap != (ArticulatedPart{Change: 1, ParameterType: 1035, Value: 0.5}) {
		t.Errorf("articulated %+v", ap)
	}
	at, ok := es.Parameters[1].Attached()
	if !ok || at != (AttachedPart{Station: 512, Store: EntityType{2, 2, 225, 1, 1, 0, 0}}) {
		t.Errorf("attached %+v", at)
	}
	if _, ok := es.Parameters[1].Articulated(); ok {
		t.Error("an attached part read as articulated")
	}
	got, err := Encode(es)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b) {
		t.Errorf("encoded\n% x\nwant\n% x", got, b)
	}
	// Version 6 of the same PDU: the status octet is not written.
	es.Version = 6
	v6, _ := Encode(es)
	if v6[0] != 6 || v6[10] != 0 || !bytes.Equal(v6[11:], b[11:]) {
		t.Errorf("as version 6: % x", v6[:12])
	}
}

const firePDU = `
07 01 02 02          # version 7, exercise 1, type 2 (fire), family 2 (warfare)
00 00 00 02
00 60 00 00          # length 96
00 01 00 02 00 03    # firing 1.2.3
00 01 00 02 00 04    # target 1.2.4
00 01 00 02 00 05    # munition 1.2.5
00 01 00 02 00 09    # event 1.2.9
00 00 00 07          # fire mission index 7
415854a640000000 c0934a0000000000 413e848000000000   # location
02 02 00 e1 01 02 00 00   # munition type
03 e8 00 32 00 01 00 00   # warhead 1000, fuse 50, quantity 1, rate 0
3fc00000 c0000000 3e800000   # velocity
42c80000             # range 100
`

func TestFire(t *testing.T) {
	p, _ := decodeHex[*Fire](t, firePDU)
	want := &Fire{
		Header: Header{Version: 7, Exercise: 1, Type: 2, Family: 2, Timestamp: 2, Length: 96},
		Firing: EntityID{1, 2, 3}, Target: EntityID{1, 2, 4}, Munition: EntityID{1, 2, 5},
		Event: EventID{1, 2, 9}, FireMissionIndex: 7,
		Location: WorldCoordinates{6378137, -1234.5, 2e6},
		Burst:    BurstDescriptor{Munition: EntityType{2, 2, 225, 1, 2, 0, 0}, Warhead: 1000, Fuse: 50, Quantity: 1},
		Velocity: Vector{1.5, -2, 0.25}, Range: 100,
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", p, want)
	}
}

const detonationPDU = `
06 01 03 02          # version 6, exercise 1, type 3 (detonation), family 2
00 00 00 00
00 78 00 00          # length 120 = 104 + 16
00 01 00 02 00 03    # firing
00 01 00 02 00 04    # target
00 00 00 00 00 00    # munition: none
00 01 00 02 00 09    # event
3fc00000 c0000000 3e800000   # velocity
415854a640000000 c0934a0000000000 413e848000000000   # location
02 02 00 e1 01 02 00 00  03 e8 00 32 00 01 00 00     # burst descriptor
3f000000 bf400000 40400000   # location in entity coordinates
01 01 00 00          # result 1 (entity impact), 1 parameter, padding
00 00 00 00 00 00 10 0b 42 c8 00 00 00 00 00 00
`

func TestDetonation(t *testing.T) {
	d, _ := decodeHex[*Detonation](t, detonationPDU)
	if d.Firing != (EntityID{1, 2, 3}) || !d.Munition.IsZero() || d.Result != 1 || d.EntityLocation != (Vector{0.5, -0.75, 3}) ||
		d.Burst.Warhead != 1000 || len(d.Parameters) != 1 || d.Location.Z != 2e6 {
		t.Errorf("decoded %+v", d)
	}
}

const attributePDU = `
07 01 48 01          # version 7, exercise 1, type 72 (attribute), family 1
00 00 00 00
00 50 00 00          # length 80
00 01 00 02          # originating simulation: site 1, application 2
00 00 00 00 00 00    # padding 32 + 16
01 01                # record PDU type 1 (entity state), protocol version (family) 1
00 03 d9 28          # master record type 252200
00 00                # action code 0, padding
00 01                # 1 record set
00 01 00 02 00 03    # entity 1.2.3
00 02                # 2 records
00 03 d9 28 00 18    # record type 252200, length 24
00 04 00 04 46 75 65 6c 42 c8 00 00 00 00 00 00 00 00   # name length 4, data length 4, "Fuel", 100.0f, padding
00 00 03 e8 00 10    # record type 1000, length 16
00 00 00 2a 00 00 00 00 00 00   # 42 and padding
`

func TestAttribute(t *testing.T) {
	a, b := decodeHex[*Attribute](t, attributePDU)
	if a.Origin != (EntityID{1, 2, 0}) || a.MasterRecordType != 252200 || a.RecordPDUType != 1 || len(a.Sets) != 1 {
		t.Fatalf("decoded %+v", a)
	}
	s := a.Sets[0]
	if s.Entity != (EntityID{1, 2, 3}) || len(s.Records) != 2 || s.Records[0].Type != 252200 || len(s.Records[0].Data) != 18 ||
		s.Records[1].Type != 1000 || len(s.Records[1].Data) != 10 {
		t.Fatalf("record set %+v", s)
	}
	// Records are padded to 64 bits on the way out.
	a.Sets[0].Records[1].Data = []byte{0, 0, 0, 42}
	got, _ := Encode(a)
	if !bytes.Equal(got, b) {
		t.Errorf("padding: encoded\n% x\nwant\n% x", got, b)
	}
}

// Every bad datagram is refused with its reason, never a panic.
func TestDecodeReasons(t *testing.T) {
	es := hx(t, espduV6)
	fire := hx(t, firePDU)
	attr := hx(t, attributePDU)
	set := func(b []byte, i int, v ...byte) []byte {
		c := append([]byte(nil), b...)
		copy(c[i:], v)
		return c
	}
	for _, c := range []struct {
		name string
		b    []byte
		want Reason
	}{
		{"empty", nil, ReasonShort},
		{"half a header", es[:6], ReasonShort},
		{"truncated", es[:100], ReasonShort},
		{"longer than its length", append(append([]byte(nil), es...), 0), ReasonLength},
		{"length field past the end", set(es, 8, 0x00, 0xb0), ReasonShort},
		{"version 4", set(es, 0, 4), ReasonUnknownVersion},
		{"version 8", set(es, 0, 8), ReasonUnknownVersion},
		{"type 25 (transmitter)", set(es, 2, 25), ReasonUnknownType},
		{"entity state in the warfare family", set(es, 3, 2), ReasonUnknownFamily},
		{"fire in family 9", set(fire, 3, 9), ReasonUnknownFamily},
		// The length agrees with the datagram, not with the count of
		// parameters: 2 claimed, 1 present.
		{"more parameters than octets", set(es, 19, 2), ReasonShort},
		{"fewer parameters than octets", set(es, 19, 0), ReasonLength},
		{"fire too long", append(set(fire, 8, 0, 100), 1, 2, 3, 4), ReasonLength},
		{"attribute: 2 sets, 1 present", set(attr, 30, 0, 2), ReasonShort},
		{"attribute: record longer than the PDU", set(attr, 44, 0xff, 0xff), ReasonShort},
		{"attribute: record length under its head", set(attr, 44, 0, 2), ReasonShort},
		{"attribute: octets after the sets", set(attr, 38, 0, 1), ReasonLength},
	} {
		_, err := Decode(c.b)
		r, ok := ReasonOf(err)
		if !ok || r != c.want {
			t.Errorf("%s: %v, want reason %v", c.name, err, c.want)
			continue
		}
		if !errors.Is(err, c.want.sentinel()) {
			t.Errorf("%s: %v does not match its sentinel", c.name, err)
		}
	}
	// Another exercise is refused when one is asked for.
	_, err := DecodeExercise(es, 4)
	if !errors.Is(err, ErrOtherExercise) {
		t.Errorf("exercise 3 read as 4: %v", err)
	}
	var de *DecodeError
	if !errors.As(err, &de) || de.Exercise != 3 || de.Type != 1 || !strings.Contains(de.Error(), "exercise 3") {
		t.Errorf("error %#v", err)
	}
}

func TestTimestamp(t *testing.T) {
	at := time.Date(2024, 5, 1, 13, 30, 0, 0, time.UTC) // half past
	ts := Timestamp(at, true)
	if ts&1 != 1 || ts>>1 != 1<<30 {
		t.Errorf("half past, absolute: %#x", ts)
	}
	past, abs := TimestampPastHour(ts)
	if !abs || past != 30*time.Minute {
		t.Errorf("read back %v %v", past, abs)
	}
	if Timestamp(at.Add(59*time.Minute+59*time.Second+999999999), false)&1 != 0 {
		t.Error("relative stamp has the absolute bit")
	}
}

// Encoding refuses what the fields cannot hold.
func TestEncodeLimits(t *testing.T) {
	es := &EntityState{Parameters: make([]VariableParameter, 256)}
	if _, err := Encode(es); err == nil {
		t.Error("256 parameters encoded")
	}
	a := &Attribute{Sets: []AttributeRecordSet{{Records: []AttributeRecord{{Data: make([]byte, 70000)}}}}}
	if _, err := Encode(a); err == nil {
		t.Error("a record of 70000 octets encoded")
	}
	big := &Attribute{Sets: make([]AttributeRecordSet, 9000)}
	if _, err := Encode(big); err == nil {
		t.Error("a PDU over 65535 octets encoded")
	}
}
