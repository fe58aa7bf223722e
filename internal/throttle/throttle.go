// Package throttle limits failed authentication per client address: the
// HTTP transports' bearer token and the console's login. Each address has
// a token bucket of Burst attempts that refills one attempt every Every;
// a failure takes one, and an address whose bucket is empty is refused
// (429 with Retry-After) until it refills. A right token costs nothing,
// so a client that authenticates does not run down its bucket however
// often it calls.
//
// Lines about failures go to the log at the same bounded rate, all
// addresses together (Burst lines, then one every Every); the lines not
// written are counted and the next line says how many, so the log stays
// readable and small under a flood.
package throttle

import (
	"log/slog"
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/evict"
)

// Defaults: 10 wrong tokens at once, then one every 6 s (10 a minute).
const (
	DefaultBurst = 10
	DefaultEvery = 6 * time.Second
)

// maxAddrs bounds the addresses remembered. When it is reached, the
// buckets that have refilled (which say nothing an absent one does not)
// are forgotten first, else the one that failed least recently.
const maxAddrs = 4096

// Failures counts failed attempts per client address. It is safe for
// concurrent use.
type Failures struct {
	// fixed at creation
	burst float64
	every time.Duration
	now   func() time.Time

	mu       sync.Mutex
	addrs    map[netip.Prefix]*bucket // guarded by mu
	log      bucket                   // guarded by mu; the log lines' own
	unlogged int                      // guarded by mu; lines not written since the last one
}

// bucket holds tokens as of at; last is its address's latest failure.
type bucket struct {
	tokens float64
	at     time.Time
	last   time.Time
}

// New returns Failures allowing burst failed attempts per address at once
// and one more every every; zero values take the defaults. now is the
// clock (time.Now when nil).
func New(burst int, every time.Duration, now func() time.Time) *Failures {
	if burst <= 0 {
		burst = DefaultBurst
	}
	if every <= 0 {
		every = DefaultEvery
	}
	if now == nil {
		now = time.Now
	}
	f := &Failures{burst: float64(burst), every: every, now: now, addrs: map[netip.Prefix]*bucket{}}
	f.log = bucket{tokens: f.burst, at: now()}
	return f
}

// Allow reports whether the client at remoteAddr (an http.Request's
// RemoteAddr) may try to authenticate now; when it may not, retryAfter is
// how many seconds until it may (at least 1, for a Retry-After header).
// Call it before checking what the client sent.
func (f *Failures) Allow(remoteAddr string) (ok bool, retryAfter int) {
	key := Client(remoteAddr)
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.addrs[key]
	if b == nil {
		return true, 0
	}
	now := f.now()
	f.refill(b, now)
	if b.tokens >= 1 {
		return true, 0
	}
	wait := time.Duration(math.Ceil((1 - b.tokens) * float64(f.every)))
	return false, max(1, int((wait+time.Second-1)/time.Second))
}

// Fail records a failed attempt of the client at remoteAddr.
func (f *Failures) Fail(remoteAddr string) {
	key := Client(remoteAddr)
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	b := f.addrs[key]
	if b == nil {
		// Room for one more: the buckets that have refilled go (they say
		// nothing an absent one does not), else the one that failed least
		// recently.
		evict.MakeRoom(f.addrs, maxAddrs, func(b *bucket) bool {
			f.refill(b, now)
			return b.tokens >= f.burst
		}, func(b *bucket) time.Time { return b.last })
		b = &bucket{tokens: f.burst, at: now}
		f.addrs[key] = b
	}
	f.refill(b, now)
	b.tokens-- // concurrent failures may take it below 0: they wait longer
	b.last = now
}

// Warn logs a line about a failure (or a refusal) at level Warn when the
// rate of such lines allows, with an attribute "unlogged" counting the
// lines not written since the last one; otherwise it counts this one.
func (f *Failures) Warn(log *slog.Logger, msg string, args ...any) {
	if ok, unlogged := f.Log(); ok {
		log.Warn(msg, append(args, "unlogged", unlogged)...)
	}
}

// Log reports whether a line about a failure (or a refusal) may be
// written now and, when it may, how many such lines were not written
// since the last one (the line should say so). Warn is Log and the line.
func (f *Failures) Log() (ok bool, unlogged int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refill(&f.log, f.now())
	if f.log.tokens < 1 {
		f.unlogged++
		return false, 0
	}
	f.log.tokens--
	unlogged, f.unlogged = f.unlogged, 0
	return true, unlogged
}

// refill adds the tokens earned since b.at, up to burst.
func (f *Failures) refill(b *bucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(f.burst, b.tokens+float64(d)/float64(f.every))
		b.at = now
	}
}

// Client is the client a remote address (an http.Request's RemoteAddr)
// stands for, as Failures counts them: its IPv4 address, or
// the /64 network of an IPv6 address (one host commonly has a whole /64 to
// pick addresses from). An address that does not parse is its own key.
// (A coarser key, the /48 a site may have, is not counted too: the tokens
// counted cannot be guessed, a client with a /48 is no worse than one with
// many IPv4 addresses, and a /48 a carrier shares among its customers
// would lock all of them out for one.)
func Client(remoteAddr string) netip.Prefix {
	ap, err := netip.ParseAddrPort(remoteAddr)
	var a netip.Addr
	if err == nil {
		a = ap.Addr()
	} else if a, err = netip.ParseAddr(remoteAddr); err != nil {
		// Not an IP address: a single key for everything that is not one
		// (an http.Request from a test or a Unix socket).
		return netip.Prefix{}
	}
	a = a.Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.WithZone("").Prefix(64)
	return p
}
