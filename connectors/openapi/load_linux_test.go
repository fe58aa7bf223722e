//go:build linux

package openapi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A start whose cache recorded the document file's identity (size,
// inode, times) does not open the unchanged file: its hash is the one
// recorded. inotify counts the opens.
func TestUnchangedDocumentIsNotRead(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(doc, mustRead(t, "testdata/shop.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() {
		t.Helper()
		c, err := New(context.Background(), Config{Name: "api", Document: doc, CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if n := opens(t, doc, start); n == 0 {
		t.Fatalf("the first start opened the document %d times", n)
	}
	if n := opens(t, doc, start); n != 0 {
		t.Errorf("the second start opened the unchanged document %d times; want its recorded identity used", n)
	}
}

// opens returns how many times file was opened while f ran.
func opens(t *testing.T, file string, f func()) int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, file, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	f()
	// Events are queued as the opens happen: all are there now.
	n := 0
	buf := make([]byte, 64*unix.SizeofInotifyEvent)
	for {
		k, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n += k / unix.SizeofInotifyEvent // events on a watched file carry no name
	}
}
