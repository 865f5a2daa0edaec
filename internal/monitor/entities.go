package monitor

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/meshrti/meshrti/dis"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
)

// The map: every instance of the RPR FOM's BaseEntity and its subclasses
// (from DIS through a gateway, or from an HLA federate) at its place, and
// the DIS gateways' counters. Both are read through ordinary
// subscriptions, once the federation's FDD has the classes.

// MaxMapEntities bounds the entities a snapshot carries; the map shows
// the first ones by name and says how many there are.
const MaxMapEntities = 2000

// Entity is one entity on the map.
type Entity struct {
	Name    string  `json:"name"`
	Class   string  `json:"class"`
	Marking string  `json:"marking"`
	Force   string  `json:"force"`
	Lat     float64 `json:"lat"`
	Lon     float64 `json:"lon"`
	Alt     float64 `json:"alt"`
	// Heard is how long ago (seconds) its position last came.
	Heard float64 `json:"heard"`
}

// Gateway is one DIS gateway's status, as it publishes it.
type Gateway struct {
	dis.GatewayStatus
	Heard float64 `json:"heard"`
}

// entities is the Monitor's picture of the map, under Monitor.mu.
type entities struct {
	subscribed bool
	cd         *codec.Codec
	classes    map[peer.ObjectClassHandle]*entityClass
	statusAttr peer.AttributeHandle
	statusCls  peer.ObjectClassHandle
	known      map[peer.ObjectInstanceHandle]*entity
	gateways   map[peer.ObjectInstanceHandle]*Gateway
	heardGW    map[peer.ObjectInstanceHandle]time.Time
}

type entityClass struct {
	class                   *fomxml.ObjectClass
	spatial, force, marking *fomxml.Attribute
	attrs                   []peer.AttributeHandle
}

type entity struct {
	Entity
	ec     *entityClass
	hasPos bool
	heard  time.Time
}

// subscribeEntities subscribes to the entity classes and the gateways'
// status class once the FDD has them; it is called at start and every
// period until it has. Not under mu.
func (m *Monitor) subscribeEntities() error {
	m.mu.Lock()
	done := m.ents.subscribed
	m.mu.Unlock()
	if done {
		return nil
	}
	fdd := m.fed.FDD()
	base, ok := fdd.ObjectClass("HLAobjectRoot.BaseEntity")
	if !ok {
		return nil
	}
	cd, err := codec.New(fdd)
	if err != nil {
		return err
	}
	classes := map[peer.ObjectClassHandle]*entityClass{}
	var errs []error
	for _, c := range fdd.ObjectClasses {
		if c != base && !c.IsSubclassOf(base) {
			continue
		}
		ec := &entityClass{class: c}
		for _, a := range c.AllAttributes() {
			switch a.Name {
			case "Spatial":
				ec.spatial = a
			case "ForceIdentifier":
				ec.force = a
			case "Marking":
				ec.marking = a
			default:
				continue
			}
			ec.attrs = append(ec.attrs, a.Handle)
		}
		if ec.spatial == nil {
			continue
		}
		classes[c.Handle] = ec
		errs = append(errs, m.fed.SubscribeObjectClassAttributes(c.Handle, ec.attrs...))
	}
	var statusCls peer.ObjectClassHandle
	var statusAttr peer.AttributeHandle
	if sc, ok := fdd.ObjectClass(dis.StatusClass); ok {
		if a, ok := sc.Attribute(dis.StatusAttribute); ok {
			statusCls, statusAttr = sc.Handle, a.Handle
			errs = append(errs, m.fed.SubscribeObjectClassAttributes(sc.Handle, a.Handle))
		}
	}
	m.mu.Lock()
	m.ents.subscribed, m.ents.cd, m.ents.classes = true, cd, classes
	m.ents.statusCls, m.ents.statusAttr = statusCls, statusAttr
	m.mu.Unlock()
	return errors.Join(errs...)
}

// resubscribeEntity subscribes again to the map's attributes of class,
// after Choose unsubscribed from it. Not under mu.
func (m *Monitor) resubscribeEntity(class peer.ObjectClassHandle) {
	m.mu.Lock()
	ec := m.ents.classes[class]
	m.mu.Unlock()
	if ec != nil {
		_ = m.fed.SubscribeObjectClassAttributes(class, ec.attrs...)
	}
}

// discoverEntity notes an instance of an entity class or of the status
// class. Under mu.
func (e *entities) discover(ev peer.DiscoverObjectInstance) {
	if e.known == nil {
		e.known, e.gateways, e.heardGW = map[peer.ObjectInstanceHandle]*entity{}, map[peer.ObjectInstanceHandle]*Gateway{}, map[peer.ObjectInstanceHandle]time.Time{}
	}
	if ec, ok := e.classes[ev.Class]; ok {
		if _, ok := e.known[ev.Object]; !ok {
			e.known[ev.Object] = &entity{Entity: Entity{Name: ev.Name, Class: ec.class.Name}, ec: ec}
		}
	}
}

// reflect applies an entity's or a gateway's values; false when the
// instance is neither. Under mu.
func (e *entities) reflect(ev peer.ReflectAttributeValues, now time.Time) (bool, error) {
	if b, ok := ev.Values[e.statusAttr]; ok && e.statusAttr != 0 {
		st, err := dis.DecodeStatus(b)
		if err != nil {
			return true, err
		}
		if e.gateways == nil {
			e.gateways, e.heardGW = map[peer.ObjectInstanceHandle]*Gateway{}, map[peer.ObjectInstanceHandle]time.Time{}
		}
		e.gateways[ev.Object] = &Gateway{GatewayStatus: st}
		e.heardGW[ev.Object] = now
		return true, nil
	}
	en, ok := e.known[ev.Object]
	if !ok {
		return false, nil
	}
	ec := en.ec
	var errs []error
	if b, ok := ev.Values[ec.spatial.Handle]; ok {
		v, err := e.cd.Decode(ec.spatial.DataType, b)
		if err == nil {
			if w, ok := worldLocation(v); ok {
				en.Lat, en.Lon, en.Alt = w.Geodetic()
				en.hasPos, en.heard = true, now
			} else {
				err = errors.New("monitor: Spatial has no WorldLocation")
			}
		}
		errs = append(errs, err)
	}
	if ec.force != nil {
		if b, ok := ev.Values[ec.force.Handle]; ok {
			v, err := e.cd.Decode(ec.force.DataType, b)
			if s, ok := v.(string); ok {
				en.Force = s
			}
			errs = append(errs, err)
		}
	}
	if ec.marking != nil {
		if b, ok := ev.Values[ec.marking.Handle]; ok {
			v, err := e.cd.Decode(ec.marking.DataType, b)
			if r, ok := v.(map[string]any); ok {
				if d, ok := r["MarkingData"].([]byte); ok {
					en.Marking = strings.TrimRight(string(d), "\x00")
				}
			}
			errs = append(errs, err)
		}
	}
	return true, errors.Join(errs...)
}

// worldLocation finds the WorldLocation of a decoded Spatial: the
// alternative's record, whichever the dead-reckoning algorithm chose.
func worldLocation(v any) (dis.WorldCoordinates, bool) {
	r, ok := v.(map[string]any)
	if !ok {
		return dis.WorldCoordinates{}, false
	}
	for _, alt := range r {
		a, ok := alt.(map[string]any)
		if !ok {
			continue
		}
		wl, ok := a["WorldLocation"].(map[string]any)
		if !ok {
			continue
		}
		x, ok1 := wl["X"].(float64)
		y, ok2 := wl["Y"].(float64)
		z, ok3 := wl["Z"].(float64)
		if ok1 && ok2 && ok3 {
			return dis.WorldCoordinates{X: x, Y: y, Z: z}, true
		}
	}
	return dis.WorldCoordinates{}, false
}

// remove forgets an instance. Under mu.
func (e *entities) remove(obj peer.ObjectInstanceHandle) {
	delete(e.known, obj)
	delete(e.gateways, obj)
	delete(e.heardGW, obj)
}

// snapshot returns the map's entities (at most MaxMapEntities, those
// with a position, by name), their count, and the gateways. Under mu.
func (e *entities) snapshot(now time.Time) ([]Entity, int, []Gateway) {
	ents := []Entity{}
	for _, en := range e.known {
		if !en.hasPos {
			continue
		}
		x := en.Entity
		x.Heard = now.Sub(en.heard).Seconds()
		ents = append(ents, x)
	}
	slices.SortFunc(ents, func(a, b Entity) int { return cmp.Compare(a.Name, b.Name) })
	n := len(ents)
	if n > MaxMapEntities {
		ents = ents[:MaxMapEntities]
	}
	gws := []Gateway{}
	for obj, g := range e.gateways {
		x := *g
		x.Heard = now.Sub(e.heardGW[obj]).Seconds()
		gws = append(gws, x)
	}
	slices.SortFunc(gws, func(a, b Gateway) int { return cmp.Compare(a.Federate, b.Federate) })
	return ents, n, gws
}
