package testnet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// The scenario commands' arguments: a command line split into words, the
// words into positional ones and key=value pairs, and the readers of the
// pairs that name things of the FOM or of the script (classes,
// attributes, objects, regions, faults).

// tokenize splits a command line at spaces; double-quoted parts (Go
// syntax) may hold spaces: Position="a b".
func tokenize(line string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case in && ch == '\\' && i+1 < len(line):
			cur.WriteByte(ch)
			i++
			cur.WriteByte(line[i])
		case ch == '"':
			in = !in
			cur.WriteByte(ch)
		case !in && (ch == ' ' || ch == '\t'):
			if cur.Len() > 0 {
				toks = append(toks, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(ch)
		}
	}
	if in {
		return nil, errors.New("unterminated quote")
	}
	if cur.Len() > 0 {
		toks = append(toks, cur.String())
	}
	return toks, nil
}

// args are a command's positional words and key=value pairs, in order.
type args struct {
	pos  []string
	keys []string
	vals map[string]string
	used map[string]bool
}

func parseArgs(toks []string) (*args, error) {
	a := &args{vals: make(map[string]string), used: make(map[string]bool)}
	for _, t := range toks {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			a.pos = append(a.pos, t)
			continue
		}
		if strings.HasPrefix(v, `"`) {
			u, err := strconv.Unquote(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t, err)
			}
			v = u
		}
		if _, dup := a.vals[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		a.keys = append(a.keys, k)
		a.vals[k] = v
	}
	return a, nil
}

// flag takes the positional word w out of the arguments and reports
// whether it was there (subscribe ... passive).
func (a *args) flag(w string) bool {
	for i, p := range a.pos {
		if p == w && i > 0 {
			a.pos = append(a.pos[:i:i], a.pos[i+1:]...)
			return true
		}
	}
	return false
}

// list returns the comma-separated values of k (names=a,b); an empty
// value (names=) is an empty list.
func (a *args) list(k string) ([]string, error) {
	v, err := a.need(k)
	if err != nil || v == "" {
		return nil, err
	}
	return strings.Split(v, ","), nil
}

func (a *args) get(k string) (string, bool) {
	v, ok := a.vals[k]
	if ok {
		a.used[k] = true
	}
	return v, ok
}

func (a *args) need(k string) (string, error) {
	v, ok := a.get(k)
	if !ok {
		return "", fmt.Errorf("missing %s=", k)
	}
	return v, nil
}

func (a *args) float(k string) (float64, bool, error) {
	v, ok := a.get(k)
	if !ok {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", k, err)
	}
	return f, true, nil
}

// needFloat reads k=, a number that must be given.
func (a *args) needFloat(k string) (float64, error) {
	v, ok, err := a.float(k)
	if err == nil && !ok {
		err = fmt.Errorf("missing %s=", k)
	}
	return v, err
}

// choose returns the value of the word v of k=, vals[i] for words[i], or
// an error that names the words it wants.
func choose[T any](k, v string, words []string, vals ...T) (T, error) {
	for i, w := range words {
		if v == w {
			return vals[i], nil
		}
	}
	var zero T
	want := words[len(words)-1]
	if len(words) > 1 {
		want = strings.Join(words[:len(words)-1], ", ") + " or " + want
	}
	return zero, fmt.Errorf("%s=%s: want %s", k, v, want)
}

// rest returns the key=value pairs not read yet, in order.
func (a *args) rest() []string {
	var ks []string
	for _, k := range a.keys {
		if !a.used[k] {
			ks = append(ks, k)
		}
	}
	return ks
}

// done fails on key=value pairs no one read.
func (a *args) done() error {
	if r := a.rest(); len(r) > 0 {
		return fmt.Errorf("unknown argument %s=", r[0])
	}
	return nil
}

// scriptValues turns the remaining key=value arguments into values, each
// key named through lookup (an attribute or parameter of class).
func scriptValues[H comparable](a *args, what, class string, lookup func(string) (H, bool)) (map[H][]byte, error) {
	vals := make(map[H][]byte)
	for _, k := range a.rest() {
		h, ok := lookup(k)
		if !ok {
			return nil, fmt.Errorf("no %s %s in %s", what, k, class)
		}
		v, _ := a.get(k)
		vals[h] = []byte(v)
	}
	return vals, nil
}

// regionsArg reads regions=R1,R2 (labels of regions the script made);
// ok is false when the argument is absent.
func (s *simulation) regionsArg(a *args) ([]peer.RegionHandle, bool, error) {
	v, ok := a.get("regions")
	if !ok {
		return nil, false, nil
	}
	rs := []peer.RegionHandle{}
	for _, l := range strings.Split(v, ",") {
		if l == "" && v == "" {
			break // regions= names no region
		}
		h, ok := s.regions[l]
		if !ok {
			return nil, false, fmt.Errorf("no region %s", l)
		}
		rs = append(rs, h)
	}
	return rs, true, nil
}

// attrsOrDimensioned reads attrs=A,B of class c, or when absent takes
// every attribute of c bound to a dimension.
func (s *simulation) attrsOrDimensioned(a *args, c *fomxml.ObjectClass) ([]peer.AttributeHandle, error) {
	if _, ok := a.vals["attrs"]; ok {
		return s.attrsOf(a, c.Handle)
	}
	var hs []peer.AttributeHandle
	for _, at := range c.AllAttributes() {
		if len(at.Dimensions) > 0 {
			hs = append(hs, at.Handle)
		}
	}
	return hs, nil
}

// classAttrsRegions reads class=C attrs=A,B [regions=R1,R2]; withRegions
// is false when regions= is absent.
func (s *simulation) classAttrsRegions(a *args) (class peer.ObjectClassHandle, attrs []peer.AttributeHandle, rs []peer.RegionHandle, withRegions bool, err error) {
	if class, attrs, err = s.classAttrs(a); err != nil {
		return 0, nil, nil, false, err
	}
	rs, withRegions, err = s.regionsArg(a)
	return class, attrs, rs, withRegions, err
}

// objectAndAttrs reads obj=O attrs=A,B: an instance and attributes of
// its class.
func (s *simulation) objectAndAttrs(a *args) (*simObject, []peer.AttributeHandle, error) {
	o, err := s.object(a)
	if err != nil {
		return nil, nil, err
	}
	attrs, err := s.attrsOf(a, o.class)
	return o, attrs, err
}

// objectAttr reads obj=O attr=A: the instance, the attribute's handle
// and its name.
func (s *simulation) objectAttr(a *args) (*simObject, peer.AttributeHandle, string, error) {
	o, err := s.object(a)
	if err != nil {
		return nil, 0, "", err
	}
	an, err := a.need("attr")
	if err != nil {
		return nil, 0, "", err
	}
	c, _ := s.fdd.ObjectClassByHandle(o.class)
	at, ok := c.Attribute(an)
	if !ok {
		return nil, 0, "", fmt.Errorf("no attribute %s", an)
	}
	return o, at.Handle, an, nil
}

// attrsOf reads attrs=A,B of class.
func (s *simulation) attrsOf(a *args, class peer.ObjectClassHandle) ([]peer.AttributeHandle, error) {
	ns, err := a.list("attrs")
	if err != nil {
		return nil, err
	}
	c, _ := s.fdd.ObjectClassByHandle(class)
	var hs []peer.AttributeHandle
	for _, n := range ns {
		at, ok := c.Attribute(n)
		if !ok {
			return nil, fmt.Errorf("no attribute %s in %s", n, c.QualifiedName)
		}
		hs = append(hs, at.Handle)
	}
	return hs, nil
}

// interactionClass reads class=C, an interaction class.
func (s *simulation) interactionClass(a *args) (*fomxml.InteractionClass, error) {
	return classArg(a, s.fdd.InteractionClass, "interaction class")
}

// objectClass reads class=C, an object class.
func (s *simulation) objectClass(a *args) (*fomxml.ObjectClass, error) {
	return classArg(a, s.fdd.ObjectClass, "object class")
}

// classArg reads class=C and finds it with find; kind names the kind of
// class in the error when there is none.
func classArg[C any](a *args, find func(string) (C, bool), kind string) (C, error) {
	var none C
	cn, err := a.need("class")
	if err != nil {
		return none, err
	}
	c, ok := find(cn)
	if !ok {
		return none, fmt.Errorf("no %s %s", kind, cn)
	}
	return c, nil
}

// attrValues reads the key=value pairs not read yet as values of
// attributes of c.
func attrValues(a *args, c *fomxml.ObjectClass) (peer.AttributeValues, error) {
	return scriptValues(a, "attribute", c.QualifiedName, func(k string) (peer.AttributeHandle, bool) {
		at, ok := c.Attribute(k)
		if !ok {
			return 0, false
		}
		return at.Handle, true
	})
}

// paramValues reads the key=value pairs not read yet as values of
// parameters of c.
func paramValues(a *args, c *fomxml.InteractionClass) (peer.ParameterValues, error) {
	return scriptValues(a, "parameter", c.QualifiedName, func(k string) (peer.ParameterHandle, bool) {
		p, ok := c.Parameter(k)
		if !ok {
			return 0, false
		}
		return p.Handle, true
	})
}

// transportArg reads type=reliable|best-effort.
func transportArg(a *args) (peer.TransportationType, error) {
	v, err := a.need("type")
	if err != nil {
		return 0, err
	}
	switch v {
	case "reliable":
		return peer.HLAreliable, nil
	case "best-effort":
		return peer.HLAbestEffort, nil
	}
	return 0, fmt.Errorf("type=%s: want reliable or best-effort", v)
}

func parseFaults(a *args) (transport.Faults, error) {
	var f transport.Faults
	for _, p := range []struct {
		k string
		v *float64
	}{{"loss", &f.Loss}, {"dup", &f.Duplicate}, {"reorder", &f.Reorder}} {
		v, ok, err := a.float(p.k)
		if err != nil {
			return f, err
		}
		if ok {
			if v < 0 || v > 1 {
				return f, fmt.Errorf("%s=%v is not a probability", p.k, v)
			}
			*p.v = v
		}
	}
	for _, p := range []struct {
		k string
		v *time.Duration
	}{{"delay", &f.Delay}, {"jitter", &f.Jitter}} {
		if v, ok := a.get(p.k); ok {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return f, fmt.Errorf("%s=%s: want a duration", p.k, v)
			}
			*p.v = d
		}
	}
	return f, nil
}

// classAttrs reads class=C attrs=A,B, an object class and attributes of
// it.
func (s *simulation) classAttrs(a *args) (peer.ObjectClassHandle, []peer.AttributeHandle, error) {
	c, err := s.objectClass(a)
	if err != nil {
		return 0, nil, err
	}
	hs, err := s.attrsOf(a, c.Handle)
	return c.Handle, hs, err
}

func (s *simulation) object(a *args) (*simObject, error) {
	l, err := a.need("obj")
	if err != nil {
		return nil, err
	}
	o, ok := s.objs[l]
	if !ok {
		return nil, fmt.Errorf("no object %s registered in the script", l)
	}
	return o, nil
}

// tag returns the script's tag= or a unique one, NAME/n, so that Check
// can follow every message.
func (s *simulation) tag(fed string, a *args) []byte {
	if t, ok := a.get("tag"); ok {
		s.userTags[t] = true
		return []byte(t)
	}
	s.msgs[fed]++
	return []byte(fmt.Sprintf("%s/%d", fed, s.msgs[fed]))
}
