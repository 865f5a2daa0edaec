package dis

import (
	"math"
	"testing"
	"time"
)

func TestGeodetic(t *testing.T) {
	for _, c := range []struct{ lat, lon, alt float64 }{
		{0, 0, 0}, {48.8584, 2.2945, 300}, {-33.8568, 151.2153, 5}, {89.9, -120, 10000}, {-45, -179.5, -50}, {36.5, 127.3, 1e5},
	} {
		w := FromGeodetic(c.lat, c.lon, c.alt)
		lat, lon, alt := w.Geodetic()
		if math.Abs(lat-c.lat) > 1e-9 || math.Abs(lon-c.lon) > 1e-9 || math.Abs(alt-c.alt) > 1e-3 {
			t.Errorf("%+v: back as %v %v %v", c, lat, lon, alt)
		}
	}
	// The equator at Greenwich is on the x axis, one semi-major axis out.
	if w := FromGeodetic(0, 0, 0); math.Abs(w.X-6378137) > 1e-6 || w.Y != 0 || w.Z != 0 {
		t.Errorf("0,0: %v", w)
	}
	if lat, _, alt := (WorldCoordinates{0, 0, 6356752.314245}).Geodetic(); math.Abs(lat-90) > 1e-9 || math.Abs(alt) > 1e-3 {
		t.Errorf("north pole: %v %v", lat, alt)
	}
}

// Facing north at (0, 0), the body's x axis is the world's z axis; facing
// east, the world's y axis.
func TestOrientationAt(t *testing.T) {
	for _, c := range []struct {
		heading float64
		want    Vector
	}{{0, Vector{0, 0, 1}}, {90, Vector{0, 1, 0}}, {180, Vector{0, 0, -1}}} {
		o := OrientationAt(0, 0, c.heading, 0, 0)
		x := bodyToWorld(Vector{1, 0, 0}, o)
		if math.Abs(float64(x.X-c.want.X)) > 1e-6 || math.Abs(float64(x.Y-c.want.Y)) > 1e-6 || math.Abs(float64(x.Z-c.want.Z)) > 1e-6 {
			t.Errorf("heading %v: body x is %v, want %v (%+v)", c.heading, x, c.want, o)
		}
	}
}

// The circle stays on its radius and moves at its speed.
func TestCircle(t *testing.T) {
	c := Circle{Lat: 48.8584, Lon: 2.2945, Alt: 1000, Radius: 2000, Speed: 100}
	centre := FromGeodetic(c.Lat, c.Lon, c.Alt)
	var es EntityState
	var prev WorldCoordinates
	for i := range 10 {
		c.State(time.Duration(i)*time.Second, &es)
		if d := distance(es.Location, centre); math.Abs(d-2000) > 1e-6 {
			t.Errorf("t=%d: %v m from the centre", i, d)
		}
		if i > 0 {
			if d := distance(es.Location, prev); math.Abs(d-100) > 0.5 {
				t.Errorf("t=%d: moved %v m in a second", i, d)
			}
		}
		prev = es.Location
	}
	c.State(0, &es)
	lat, _, _ := es.Location.Geodetic()
	if lat <= c.Lat {
		t.Errorf("starts at latitude %v, south of the centre", lat)
	}
}
