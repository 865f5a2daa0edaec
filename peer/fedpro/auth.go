package fedpro

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"unicode/utf16"

	"golang.org/x/crypto/bcrypt"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/hla"
)

// The credential types HLA 4 defines (IEEE 1516.1-2025): no
// credentials, the same as a connect without them; and a plain-text
// password, whose data is an HLAunicodeString (a 4-byte big-endian count
// of UTF-16 code units, then the units big-endian). A plain-text password
// carries no user name.
const (
	NoCredentialsType     = "HLAnoCredentials"
	PlainTextPasswordType = "HLAplainTextPassword"
)

// An Authenticator checks the credentials of a Connect: creds is nil for
// a connect without them. It returns nil to let the connect go on, with
// who naming the credentials for the log (may be empty), or an error
// wrapping the exception to answer (hla.ErrUnauthorized,
// hla.ErrInvalidCredentials). It may be called from several sessions at
// once.
type Authenticator func(creds *pb.Credentials) (who string, err error)

// authenticate checks a connect's credentials with Config.Authenticate.
func (s *Session) authenticate(creds *pb.Credentials) error {
	auth := s.host.cfg.Authenticate
	if auth == nil {
		return nil
	}
	who, err := auth(creds)
	if err != nil {
		s.host.logf("%sconnect refused: %v", s.logName, err)
		if !errors.Is(err, hla.ErrUnauthorized) && !errors.Is(err, hla.ErrInvalidCredentials) {
			err = fmt.Errorf("%w: %w", hla.ErrUnauthorized, err)
		}
		return err
	}
	if who != "" {
		who = " as " + who
	}
	s.host.logf("%sconnect accepted%s", s.logName, who)
	return nil
}

// SetLogName names the session in the log lines of its connects (the
// refusals): name, then ": ". Call it before the first Call.
func (s *Session) SetLogName(name string) {
	if name != "" {
		s.logName = name + ": "
	}
}

// PlainTextPassword returns HLA 4 plain-text password credentials, as
// Pitch's and MAK's clients send them (HLAplainTextPassword).
func PlainTextPassword(password string) *pb.Credentials {
	units := utf16.Encode([]rune(password))
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+2*len(units)), uint32(len(units)))
	for _, u := range units {
		b = binary.BigEndian.AppendUint16(b, u)
	}
	return &pb.Credentials{Type: PlainTextPasswordType, Data: b}
}

// DecodePlainTextPassword returns the password of HLAplainTextPassword
// credentials. Data that is no HLAunicodeString is an error wrapping
// hla.ErrInvalidCredentials; credentials of another type one wrapping
// hla.ErrUnauthorized.
func DecodePlainTextPassword(c *pb.Credentials) (string, error) {
	if c.GetType() != PlainTextPasswordType {
		return "", fmt.Errorf("%w: credentials of type %q, want %s", hla.ErrUnauthorized, c.GetType(), PlainTextPasswordType)
	}
	d := c.GetData()
	if len(d) < 4 {
		return "", fmt.Errorf("%w: %s of %d bytes: no length", hla.ErrInvalidCredentials, PlainTextPasswordType, len(d))
	}
	n := binary.BigEndian.Uint32(d)
	if uint64(len(d)-4) != 2*uint64(n) {
		return "", fmt.Errorf("%w: %s says %d UTF-16 units in %d bytes", hla.ErrInvalidCredentials, PlainTextPasswordType, n, len(d)-4)
	}
	units := make([]uint16, n)
	for i := range units {
		units[i] = binary.BigEndian.Uint16(d[4+2*i:])
	}
	return string(utf16.Decode(units)), nil
}

// Passwords is a credentials file: the bcrypt hashes of the passwords a
// connect may carry, each with a name for the log. Its Authenticate is
// an Authenticator. bcrypt (golang.org/x/crypto/bcrypt) is the standard
// salted, deliberately slow password hash: a stolen file does not give
// the passwords away cheaply.
type Passwords struct {
	entries []passwordEntry
	sem     chan struct{} // bounds the checks running at once
}

type passwordEntry struct {
	name string
	hash []byte
}

// DefaultPasswordCost is the bcrypt cost HashPassword uses: about 50 ms
// a check on a current core.
const DefaultPasswordCost = bcrypt.DefaultCost

// HashPassword returns the line of a credentials file that accepts
// password: "name:hash". Cost 0 means DefaultPasswordCost. A name may
// not hold ':' or white space; bcrypt takes at most 72 bytes of
// password, and an empty one is refused.
func HashPassword(name, password string, cost int) (string, error) {
	if name == "" || strings.ContainsAny(name, ": \t\r\n#") {
		return "", fmt.Errorf("fedpro: credential name %q: want a word without ':', '#' or spaces", name)
	}
	if password == "" {
		return "", errors.New("fedpro: an empty password")
	}
	if cost == 0 {
		cost = DefaultPasswordCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", fmt.Errorf("fedpro: %w", err)
	}
	return name + ":" + string(h), nil
}

// LoadPasswords reads a credentials file (ParsePasswords).
func LoadPasswords(path string) (*Passwords, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ParsePasswords(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// ParsePasswords reads a credentials file: one "name:hash" a line, hash
// a bcrypt hash (HashPassword writes such lines); blank lines and lines
// starting with # are skipped. The name only tells, in the log, which
// entry a connect matched: HLA 4 plain-text credentials carry no user.
// A file without entries is an error, as is a line that is no entry.
func ParsePasswords(r io.Reader) (*Passwords, error) {
	p := &Passwords{sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))}
	sc := bufio.NewScanner(r)
	names := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, hash, ok := strings.Cut(text, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("line %d: want name:bcrypt-hash (federate-node serve passwd NAME makes one)", line)
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("line %d (%s): not a bcrypt hash: %w", line, name, err)
		}
		if names[name] {
			return nil, fmt.Errorf("line %d: name %s given twice", line, name)
		}
		names[name] = true
		p.entries = append(p.entries, passwordEntry{name, []byte(hash)})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(p.entries) == 0 {
		return nil, errors.New("no entries: every connect would be refused")
	}
	return p, nil
}

// Len returns the number of entries.
func (p *Passwords) Len() int { return len(p.entries) }

// Authenticate accepts HLAplainTextPassword credentials whose password
// matches an entry, and returns the entry's name. Other credentials, or none, are refused with
// hla.ErrUnauthorized, and data that does not decode with
// hla.ErrInvalidCredentials. At most GOMAXPROCS checks run at once: each
// costs bcrypt's time per entry, so that a flood of connects queues
// instead of taking every core.
func (p *Passwords) Authenticate(creds *pb.Credentials) (string, error) {
	if creds == nil || creds.GetType() == NoCredentialsType {
		return "", fmt.Errorf("%w: the daemon wants %s credentials; the connect carried none", hla.ErrUnauthorized, PlainTextPasswordType)
	}
	password, err := DecodePlainTextPassword(creds)
	if err != nil {
		return "", err
	}
	p.sem <- struct{}{}
	defer func() { <-p.sem }()
	for _, e := range p.entries {
		if bcrypt.CompareHashAndPassword(e.hash, []byte(password)) == nil {
			return e.name, nil
		}
	}
	return "", fmt.Errorf("%w: wrong password", hla.ErrUnauthorized)
}
