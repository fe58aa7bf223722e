package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"

	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

const (
	// maxLineBytes caps one logged stderr line; longer output is split.
	maxLineBytes = 8 << 10
	// tailLines is how many recent stderr lines are kept for error messages.
	tailLines = 10
	// tailLineBytes caps each kept line.
	tailLineBytes = 300
)

// A lineLogger receives a child's stderr and logs it line by line at debug
// level. It keeps the last few lines so a failed start can show them. Lines
// are scrubbed of secrets before they are logged or kept (a server may
// print its own credentials).
type lineLogger struct {
	logger *slog.Logger
	scrub  *scrub.Scrubber

	mu      sync.Mutex
	partial []byte
	tail    []string
}

func newLineLogger(logger *slog.Logger, s *scrub.Scrubber) *lineLogger {
	return &lineLogger{logger: logger, scrub: s}
}

// Write logs every complete line of p and buffers the rest.
func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		switch {
		case i >= 0 && i <= maxLineBytes:
			l.emit(l.partial[:i])
			l.partial = l.partial[i+1:]
		case len(l.partial) >= maxLineBytes:
			l.emit(l.partial[:maxLineBytes])
			l.partial = l.partial[maxLineBytes:]
		default:
			l.partial = append([]byte(nil), l.partial...) // release consumed bytes
			return len(p), nil
		}
	}
}

// Flush logs an unterminated last line.
func (l *lineLogger) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.emit(l.partial)
		l.partial = nil
	}
}

// Tail returns the last lines received, oldest first.
func (l *lineLogger) Tail() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.tail...)
}

func (l *lineLogger) emit(b []byte) {
	line := strings.TrimRight(string(b), "\r")
	if strings.TrimSpace(line) == "" {
		return
	}
	line = l.scrub.String(line)
	l.logger.Debug("server stderr", "line", line)
	if len(line) > tailLineBytes {
		line = strings.ToValidUTF8(line[:tailLineBytes], "") + "…"
	}
	if len(l.tail) == tailLines {
		l.tail = append(l.tail[:0], l.tail[1:]...)
	}
	l.tail = append(l.tail, line)
}
