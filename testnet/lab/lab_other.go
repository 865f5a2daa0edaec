//go:build !linux

package lab

import "errors"

// ErrUnavailable: a lab needs Linux network namespaces.
var ErrUnavailable = errors.New("lab: network namespaces need Linux")
