package throttle

import (
	"fmt"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"sync"
	"testing"
	"time"
)

// An address may fail burst times; then it waits until one attempt has
// refilled, and gets one attempt per period from then on. Other addresses
// are not affected, and an address that never fails is never limited.
func TestFailuresPerAddress(t *testing.T) {
	c := fixture.NewClock()
	f := New(3, 10*time.Second, c.Now)
	const a, b = "192.0.2.1:40000", "192.0.2.2:40000"
	for i := range 3 {
		if ok, _ := f.Allow(a); !ok {
			t.Fatalf("attempt %d refused within the burst", i+1)
		}
		f.Fail(a)
	}
	if ok, secs := f.Allow(a); ok || secs != 10 {
		t.Fatalf("after the burst: ok %v, retry after %d s; want refused for 10 s", ok, secs)
	}
	if ok, _ := f.Allow("192.0.2.1:50000"); ok {
		t.Fatal("the same address from another port is not limited")
	}
	if ok, _ := f.Allow(b); !ok {
		t.Fatal("another address is limited")
	}
	c.Advance(3500 * time.Millisecond)
	if ok, secs := f.Allow(a); ok || secs != 7 {
		t.Fatalf("3.5 s later: ok %v, retry after %d s; want refused for 7 s more (6.5, rounded up)", ok, secs)
	}
	c.Advance(6500 * time.Millisecond)
	if ok, _ := f.Allow(a); !ok {
		t.Fatal("refused once an attempt refilled")
	}
	f.Fail(a)
	if ok, _ := f.Allow(a); ok {
		t.Fatal("a second attempt allowed within the period")
	}
	c.Advance(time.Hour)
	for i := range 3 {
		if ok, _ := f.Allow(a); !ok {
			t.Fatalf("after an hour, attempt %d refused: the bucket did not refill to the burst", i+1)
		}
		f.Fail(a)
	}
	if ok, _ := f.Allow(a); ok {
		t.Fatal("the bucket refilled beyond the burst")
	}
}

// IPv6 clients are counted by their /64 network; IPv4 ones by address,
// also when written as IPv4-mapped IPv6.
func TestAddrKey(t *testing.T) {
	same := [][2]string{
		{"[2001:db8:1:2::1]:443", "[2001:db8:1:2:ffff::9]:80"},
		{"192.0.2.7:1", "[::ffff:192.0.2.7]:2"},
		{"[fe80::1%eth0]:1", "[fe80::2]:1"},
	}
	for _, p := range same {
		if Client(p[0]) != Client(p[1]) {
			t.Errorf("%s and %s are different clients; want one", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"[2001:db8:1:2::1]:443", "[2001:db8:1:3::1]:443"}, {"192.0.2.7:1", "192.0.2.8:1"}} {
		if Client(p[0]) == Client(p[1]) {
			t.Errorf("%s and %s are one client; want two", p[0], p[1])
		}
	}
}

// Log lines are bounded across all addresses, and the next line written
// says how many were not.
func TestLogIsBounded(t *testing.T) {
	c := fixture.NewClock()
	f := New(2, time.Minute, c.Now)
	var written, unlogged int
	for range 100 {
		if ok, n := f.Log(); ok {
			written++
			unlogged += n
		}
	}
	if written != 2 || unlogged != 0 {
		t.Fatalf("at once: %d lines written (%d said unlogged); want 2 and 0", written, unlogged)
	}
	c.Advance(time.Minute)
	ok, n := f.Log()
	if !ok || n != 98 {
		t.Fatalf("a minute later: ok %v, unlogged %d; want a line saying 98 were not written", ok, n)
	}
	if ok, _ := f.Log(); ok {
		t.Fatal("a second line within the minute")
	}
}

// The addresses remembered are bounded: refilled ones are forgotten
// first, else the one that failed least recently.
func TestAddressesAreBounded(t *testing.T) {
	c := fixture.NewClock()
	f := New(1, time.Minute, c.Now)
	addr := func(i int) string { return fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255) }
	for i := range maxAddrs + 100 {
		c.Advance(time.Millisecond)
		f.Fail(addr(i))
	}
	if len(f.addrs) != maxAddrs {
		t.Fatalf("%d addresses remembered; want %d", len(f.addrs), maxAddrs)
	}
	for _, i := range []int{0, 99} {
		if ok, _ := f.Allow(addr(i)); !ok {
			t.Errorf("%s, among the first to fail, is still limited; want it forgotten", addr(i))
		}
	}
	for _, i := range []int{100, maxAddrs + 99} {
		if ok, _ := f.Allow(addr(i)); ok {
			t.Errorf("%s is not limited; want it remembered", addr(i))
		}
	}
	c.Advance(2 * time.Minute) // every bucket is full again
	f.Fail("203.0.113.9:1")
	if len(f.addrs) != 1 {
		t.Errorf("%d addresses remembered; want only the new one once the others refilled", len(f.addrs))
	}
}

// Concurrent failures and checks from many goroutines keep the counts
// consistent (run with -race).
func TestConcurrentUse(t *testing.T) {
	f := New(5, time.Hour, fixture.NewClock().Now)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				addr := fmt.Sprintf("192.0.2.%d:1", (g*200+i)%16)
				f.Allow(addr)
				f.Fail(addr)
				f.Log()
			}
		})
	}
	wg.Wait()
	for i := range 16 {
		if ok, _ := f.Allow(fmt.Sprintf("192.0.2.%d:1", i)); ok {
			t.Errorf("192.0.2.%d failed 100 times and is not limited", i)
		}
	}
}

// The invariant under concurrency: an address's allowed failures are at
// most Burst plus one per Every elapsed, plus one for each other attempt
// in flight between its Allow and its Fail (an Allow reserves nothing, so
// concurrent attempts may take the bucket below zero; they are paid back
// by a longer wait). G goroutines attack one address while the clock
// moves on between rounds (run with -race).
func TestConcurrentAttemptsStayWithinTheRate(t *testing.T) {
	const burst, rounds, goroutines = 5, 20, 8
	c := fixture.NewClock()
	f := New(burst, time.Minute, c.Now)
	allowed := 0
	for range rounds {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range 50 {
					if ok, secs := f.Allow("198.51.100.7:4242"); !ok {
						if secs < 1 {
							t.Errorf("refused with Retry-After %d", secs)
						}
						continue
					}
					mu.Lock()
					allowed++
					mu.Unlock()
					f.Fail("198.51.100.7:4242")
				}
			})
		}
		wg.Wait()
		c.Advance(3 * time.Minute)
	}
	if most := burst + 3*(rounds-1) + goroutines - 1; allowed > most || allowed < burst {
		t.Errorf("%d failed attempts allowed in %d rounds, want between %d and %d", allowed, rounds, burst, most)
	}
}
