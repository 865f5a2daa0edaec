package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer/fedpro"
)

// serveAuthFlags say who may use `serve`: a credentials file checked at
// each HLA 4 Connect, TLS client certificates checked at the handshake,
// and whether a listener beyond loopback may go without either.
type serveAuthFlags struct {
	Credentials string // file of name:bcrypt-hash lines
	ClientCA    string // PEM file of the CAs a TLS client's certificate must chain to
	Insecure    bool   // listen beyond loopback with nobody authenticated
}

func (af *serveAuthFlags) registerAuth(fs *flag.FlagSet) {
	fs.StringVar(&af.Credentials, "credentials", "", "credentials `FILE` (lines name:bcrypt-hash; federate-node serve passwd NAME makes one): every Connect must carry an HLAplainTextPassword that matches an entry, else Unauthorized")
	fs.StringVar(&af.ClientCA, "client-ca", "", "PEM `FILE` of CA certificates: TLS clients must present a certificate they signed, else the handshake fails (needs -cert and -key)")
	fs.BoolVar(&af.Insecure, "insecure", false, "allow listening beyond loopback with clients nobody authenticates (no -credentials, no -client-ca)")
}

// authenticator returns the check of each Connect: nil without
// -credentials.
func (af *serveAuthFlags) authenticator() (fedpro.Authenticator, error) {
	if af.Credentials == "" {
		return nil, nil
	}
	p, err := fedpro.LoadPasswords(af.Credentials)
	if err != nil {
		return nil, fmt.Errorf("-credentials: %w", err)
	}
	return p.Authenticate, nil
}

// clientAuth makes cfg (the TLS listener's) require a client certificate
// signed by a -client-ca certificate.
func (af *serveAuthFlags) clientAuth(cfg *tls.Config) error {
	if af.ClientCA == "" {
		return nil
	}
	b, err := os.ReadFile(af.ClientCA)
	if err != nil {
		return fmt.Errorf("-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return fmt.Errorf("-client-ca %s: no PEM certificate in it", af.ClientCA)
	}
	cfg.ClientCAs = pool
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	return nil
}

// checkExposure refuses, before anything is bound, listeners beyond
// loopback whose clients nobody authenticates: the plain TCP one
// (-listen; empty: none) needs -credentials; the TLS one (-tls-listen,
// when tls) -credentials or -client-ca. -insecure allows them, with a
// warning. A plain listener beyond loopback with -credentials gets a
// warning too: its passwords cross the network in clear.
func (sf *serveFlags) checkExposure(tls bool, logf func(string, ...any)) error {
	var open []string
	if sf.Listen != "" && !isLoopback(sf.Listen) {
		if sf.Credentials == "" {
			open = append(open, fmt.Sprintf("-listen %s (plain TCP)", sf.Listen))
		} else {
			logf("warning: -listen %s is plain TCP beyond loopback: passwords and simulation data cross the network in clear; prefer -tls-listen with -cert and -key, and -listen on 127.0.0.1", sf.Listen)
		}
	}
	if tls && !isLoopback(sf.TLSListen) && sf.Credentials == "" && sf.ClientCA == "" {
		open = append(open, fmt.Sprintf("-tls-listen %s (TLS, but any client may connect)", sf.TLSListen))
	}
	if len(open) == 0 {
		return nil
	}
	if sf.Insecure {
		logf("warning (-insecure): anyone who reaches %s may create, join and destroy federations", strings.Join(open, " and "))
		return nil
	}
	return fmt.Errorf("refusing to listen beyond loopback on %s with no client authentication: "+
		"give -credentials FILE (HLA 4 plain-text passwords; best over TLS: -tls-listen with -cert and -key), "+
		"or -client-ca FILE (TLS client certificates, on -tls-listen with -cert and -key), "+
		"or bind -listen and -tls-listen to 127.0.0.1; -insecure allows it anyway (docs/deploy.md)", strings.Join(open, " and "))
}

// isLoopback reports whether a listen address (host:port) binds loopback
// only: its host is a loopback IP, or a name all of whose addresses are
// loopback ("localhost"). An empty or unspecified host (":15164",
// "0.0.0.0", "::") is every interface; a name that does not resolve
// counts as beyond loopback.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// runServePasswd is `federate-node serve passwd [-cost N] NAME`: it reads
// a password from the first line of stdin and prints the credentials
// file line that accepts it.
func runServePasswd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("serve passwd", stdout, stderr)
	fs := cmd.FS
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s", "usage: federate-node serve passwd [-cost N] NAME < password\n"+
			"reads a password from the first line of stdin and prints a line for serve -credentials:\n"+
			"  read -rs PW; printf '%s\\n' \"$PW\" | federate-node serve passwd alice >> credentials\n")
		fs.PrintDefaults()
	}
	cost := fs.Int("cost", fedpro.DefaultPasswordCost, "bcrypt cost (4..31): each step doubles the time of a check")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		fmt.Fprintln(stderr, "federate-node serve passwd: no password on stdin")
		return 1
	}
	entry, err := fedpro.HashPassword(fs.Arg(0), strings.TrimRight(line, "\r\n"), *cost)
	if err != nil {
		return cmd.Fail(err)
	}
	fmt.Fprintln(stdout, entry)
	return 0
}
