package dis

import "math"

// WGS84's ellipsoid, the frame of DIS world coordinates.
const (
	wgs84A  = 6378137.0
	wgs84F  = 1 / 298.257223563
	wgs84E2 = wgs84F * (2 - wgs84F)
)

// FromGeodetic returns the world coordinates of a point at latitude lat
// and longitude lon (degrees) and height alt (metres above the
// ellipsoid).
func FromGeodetic(lat, lon, alt float64) WorldCoordinates {
	phi, lambda := lat*math.Pi/180, lon*math.Pi/180
	sp, cp := math.Sincos(phi)
	sl, cl := math.Sincos(lambda)
	n := wgs84A / math.Sqrt(1-wgs84E2*sp*sp)
	return WorldCoordinates{(n + alt) * cp * cl, (n + alt) * cp * sl, (n*(1-wgs84E2) + alt) * sp}
}

// Geodetic returns the latitude and longitude (degrees) and height
// (metres above the WGS84 ellipsoid) of w. A point at the centre of the
// earth gives zeros.
func (w WorldCoordinates) Geodetic() (lat, lon, alt float64) {
	p := math.Hypot(w.X, w.Y)
	if p == 0 && w.Z == 0 {
		return 0, 0, 0
	}
	lon = math.Atan2(w.Y, w.X)
	// Iterate on the latitude (converges to below a millimetre in a few
	// steps anywhere off the axis).
	phi := math.Atan2(w.Z, p*(1-wgs84E2))
	var n float64
	for range 6 {
		sp := math.Sin(phi)
		n = wgs84A / math.Sqrt(1-wgs84E2*sp*sp)
		alt = p/math.Cos(phi) - n
		phi = math.Atan2(w.Z, p*(1-wgs84E2*n/(n+alt)))
	}
	if p < 1 { // on the axis: the height from z
		sp := math.Sin(phi)
		n = wgs84A / math.Sqrt(1-wgs84E2*sp*sp)
		alt = math.Abs(w.Z) - n*(1-wgs84E2)
	}
	return phi * 180 / math.Pi, lon * 180 / math.Pi, alt
}

// OrientationAt returns the Euler angles (psi, theta, phi, relative to
// the world frame) of an entity at latitude lat and longitude lon
// (degrees) with the heading, pitch and roll given (degrees; heading
// from north, clockwise).
func OrientationAt(lat, lon, heading, pitch, roll float64) EulerAngles {
	rad := math.Pi / 180
	sp, cp := math.Sincos(lat * rad)
	sl, cl := math.Sincos(lon * rad)
	// Rows: north, east and down in world coordinates.
	ned := [3][3]float64{{-sp * cl, -sp * sl, cp}, {-sl, cl, 0}, {-cp * cl, -cp * sl, -sp}}
	// Body from north-east-down: roll about x, pitch about y, heading
	// about z.
	sh, ch := math.Sincos(heading * rad)
	st, ct := math.Sincos(pitch * rad)
	sr, cr := math.Sincos(roll * rad)
	b := [3][3]float64{
		{ct * ch, ct * sh, -st},
		{sr*st*ch - cr*sh, sr*st*sh + cr*ch, sr * ct},
		{cr*st*ch + sr*sh, cr*st*sh - sr*ch, cr * ct},
	}
	var m [3][3]float64 // body from world = b · ned
	for i := range 3 {
		for j := range 3 {
			for k := range 3 {
				m[i][j] += b[i][k] * ned[k][j]
			}
		}
	}
	return EulerAngles{
		Psi:   float32(math.Atan2(m[0][1], m[0][0])),
		Theta: float32(math.Asin(math.Max(-1, math.Min(1, -m[0][2])))),
		Phi:   float32(math.Atan2(m[1][2], m[2][2])),
	}
}
