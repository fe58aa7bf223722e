// Package pgtest starts throwaway PostgreSQL clusters for tests: initdb and
// pg_ctl from the machine's PostgreSQL (Debian's postgresql package puts
// them in /usr/lib/postgresql/<version>/bin), on a temporary directory,
// listening on a Unix socket only. No mock: the tests of the PostgreSQL
// store and the replica tests run against a real server.
//
// initdb refuses to run as root, so when the test runs as root the cluster
// is made and run by the postgres user (runuser). Without PostgreSQL a test
// is skipped, except under CI (CI set), where it fails: CI installs it.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running PostgreSQL server on a temporary directory.
type Cluster struct {
	dir     string // data, socket and log live under it
	bin     string // directory of initdb and pg_ctl
	runAs   string // "" or the user the server runs as (runuser)
	opts    string // the server's options (pg_ctl -o), for Restart
	dbs     atomic.Int64
	stopped atomic.Bool
}

// find returns the directory holding initdb and pg_ctl: the one on PATH,
// else the newest /usr/lib/postgresql/*/bin.
func find() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		return "", errors.New("PostgreSQL's initdb and pg_ctl are not installed (Debian: apt-get install postgresql)")
	}
	// The version is the number in /usr/lib/postgresql/<version>/bin.
	version := func(initdb string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
		return v
	}
	return filepath.Dir(slices.MaxFunc(found, func(a, b string) int { return version(a) - version(b) })), nil
}

// start makes and starts a cluster; Stop removes it. durable keeps
// PostgreSQL's durable defaults (fsync, synchronous_commit), as a real
// server runs; without it, test data need not survive a crash of the
// machine.
func start(durable bool) (*Cluster, error) {
	bin, err := find()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "codemode-pg-")
	if err != nil {
		return nil, err
	}
	// A Unix socket only.
	c := &Cluster{dir: dir, bin: bin, opts: fmt.Sprintf("-k %s -c listen_addresses='' -c max_connections=200", dir)}
	if !durable {
		c.opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
		err = chownTree(dir, c.runAs)
	}
	if err == nil {
		err = c.run("initdb", "-D", c.data(), "--auth=trust", "--username=postgres", "--encoding=UTF8", "--no-sync")
	}
	if err == nil {
		err = c.startServer()
	}
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return c, nil
}

// startServer starts the server on the cluster's directory and waits
// until it accepts connections.
func (c *Cluster) startServer() error {
	logFile := filepath.Join(c.dir, "server.log")
	if err := c.run("pg_ctl", "-D", c.data(), "-l", logFile, "-o", c.opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(logFile)
		return fmt.Errorf("%w\nserver log:\n%s", err, log)
	}
	return nil
}

// Crash stops the server as a crash would (pg_ctl's immediate mode: every
// server process exits at once, connections are cut, nothing is
// checkpointed) and returns once it is down. Restart brings it back on
// the same directory and socket, replaying its write-ahead log.
func (c *Cluster) Crash() error {
	return c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "-t", "30", "stop")
}

// Restart starts the server again after Crash and returns once it
// accepts connections.
func (c *Cluster) Restart() error { return c.startServer() }

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// run runs one of the cluster's programs, as the postgres user when this
// process is root.
func (c *Cluster) run(prog string, args ...string) error {
	name := filepath.Join(c.bin, prog)
	if c.runAs != "" {
		args = append([]string{"-u", c.runAs, "--", name}, args...)
		name = "runuser"
	}
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl's server keeps no handle of ours: it is waited for by -w.
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %w\n%s", prog, args, err, out.String())
	}
	return nil
}

// chownTree gives dir to the named user.
func chownTree(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("PostgreSQL must run as %s when tests run as root: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

// dbURL is the connection URL of database db.
func (c *Cluster) dbURL(db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&sslmode=disable", db, c.dir)
}

// NewDatabase creates an empty database and returns its URL.
func (c *Cluster) NewDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d", c.dbs.Add(1))
	conn, err := pgx.Connect(ctx, c.dbURL("postgres"))
	if err != nil {
		return "", fmt.Errorf("connect to the test cluster: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return c.dbURL(name), nil
}

// Stop stops the server (fast shutdown: connections are closed) and
// removes the directory. It is safe to call more than once.
func (c *Cluster) Stop() error {
	if c == nil || !c.stopped.CompareAndSwap(false, true) {
		return nil
	}
	err := c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "-t", "30", "stop")
	return errors.Join(err, os.RemoveAll(c.dir))
}

// lazy is a cluster started by the first test that needs it.
type lazy struct {
	durable bool
	once    sync.Once
	c       *Cluster
	err     error
}

var shared, durable = &lazy{}, &lazy{durable: true}

// get starts the cluster once; without PostgreSQL, t is skipped, or fails
// under CI.
func (l *lazy) get(t testing.TB) *Cluster {
	t.Helper()
	l.once.Do(func() {
		began := time.Now()
		l.c, l.err = start(l.durable)
		if l.err == nil {
			t.Logf("PostgreSQL test cluster started in %s", time.Since(began).Round(time.Millisecond))
		}
	})
	if l.err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL test cluster: %v", l.err)
		}
		t.Skipf("PostgreSQL test cluster: %v", l.err)
	}
	return l.c
}

// NewDatabase returns the URL of a new, empty database on the cluster of
// this test binary, started by the first caller; Stop (from TestMain)
// stops it. Its durability is off. Without PostgreSQL, t is
// skipped, or fails under CI (CI set).
func NewDatabase(t testing.TB) string {
	t.Helper()
	return shared.database(t)
}

// DurableDatabase is NewDatabase on a cluster with durability on, for
// benchmarks; Stop stops it.
func DurableDatabase(t testing.TB) string {
	t.Helper()
	return durable.database(t)
}

func (l *lazy) database(t testing.TB) string {
	t.Helper()
	url, err := l.get(t).NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// Private starts a cluster of t's own, which t may crash and restart
// (Crash, Restart) without disturbing other tests; it is stopped when t
// ends. It is durable: what it acknowledged survives a crash, as on a
// real server. Without PostgreSQL, t is skipped, or fails under CI (CI
// set).
func Private(t testing.TB) *Cluster {
	t.Helper()
	c := (&lazy{durable: true}).get(t)
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop the test's PostgreSQL cluster: %v", err)
		}
	})
	return c
}

// Stop stops the clusters of NewDatabase and DurableDatabase that were
// started, from TestMain.
func Stop() error { return errors.Join(shared.c.Stop(), durable.c.Stop()) }
