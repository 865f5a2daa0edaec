package testnet

import (
	"fmt"

	"github.com/meshrti/meshrti/peer"
)

// Support services: the advisory and reporting switches, and callbacks
// on or off.

// switchCommand runs "switch NAME SWITCH on|off|get".
func (s *simulation) switchCommand(c *call) (*serviceError, error) {
	a := c.a
	if len(a.pos) != 3 || (a.pos[2] != "on" && a.pos[2] != "off" && a.pos[2] != "get") {
		return nil, c.usageError()
	}
	name := a.pos[0]
	i, err := s.federate(name)
	if err != nil {
		return nil, err
	}
	f, on := s.c.Feds[i], a.pos[2] == "on"
	set := func(sw func(bool) error) func() error { return func() error { return sw(on) } }
	type ops struct {
		on, off func() error
		get     func() (bool, error)
	}
	sw := map[string]ops{
		"relevance":             {f.EnableObjectClassRelevanceAdvisorySwitch, f.DisableObjectClassRelevanceAdvisorySwitch, f.GetObjectClassRelevanceAdvisorySwitch},
		"attribute-relevance":   {f.EnableAttributeRelevanceAdvisorySwitch, f.DisableAttributeRelevanceAdvisorySwitch, f.GetAttributeRelevanceAdvisorySwitch},
		"scope":                 {f.EnableAttributeScopeAdvisorySwitch, f.DisableAttributeScopeAdvisorySwitch, f.GetAttributeScopeAdvisorySwitch},
		"interaction-relevance": {f.EnableInteractionRelevanceAdvisorySwitch, f.DisableInteractionRelevanceAdvisorySwitch, f.GetInteractionRelevanceAdvisorySwitch},
		"service-reporting":     {set(f.SetServiceReportingSwitch), set(f.SetServiceReportingSwitch), f.GetServiceReportingSwitch},
		"exception-reporting":   {set(f.SetExceptionReportingSwitch), set(f.SetExceptionReportingSwitch), f.GetExceptionReportingSwitch},
	}
	p, ok := sw[a.pos[1]]
	if !ok {
		return nil, fmt.Errorf("no switch %s", a.pos[1])
	}
	switch {
	case a.pos[2] == "get":
		v, err := p.get()
		if err != nil {
			return fail(name, err)
		}
		state := "off"
		if v {
			state = "on"
		}
		s.lines = append(s.lines, fmt.Sprintf("%s: switch %s %s", name, a.pos[1], state))
		return nil, nil
	case on:
		return fail(name, p.on())
	}
	return fail(name, p.off())
}

// callbacks runs "callbacks NAME on|off".
func (s *simulation) callbacks(c *call) (*serviceError, error) {
	return s.onOff(c, (*peer.Federate).EnableCallbacks, (*peer.Federate).DisableCallbacks)
}

// onOff runs "CMD NAME on|off": on or off calls the federate's service.
func (s *simulation) onOff(c *call, on, off func(*peer.Federate) error) (*serviceError, error) {
	a := c.a
	if len(a.pos) != 2 || (a.pos[1] != "on" && a.pos[1] != "off") {
		return nil, c.usageError()
	}
	i, err := s.federate(a.pos[0])
	if err != nil {
		return nil, err
	}
	if a.pos[1] == "on" {
		return fail(a.pos[0], on(s.c.Feds[i]))
	}
	return fail(a.pos[0], off(s.c.Feds[i]))
}
