package mcp

import (
	"bytes"
	"cmp"
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
	seg     int // partial[seg:] follows the last line break removed (see Write)
	tail    []string
}

func newLineLogger(logger *slog.Logger, s *scrub.Scrubber) *lineLogger {
	return &lineLogger{logger: logger, scrub: s}
}

// Write logs every complete line of p and buffers the rest. A line of
// base64 wrapped as MIME (76 characters) or PEM (64) writes it, followed
// by more base64, is joined with the next (its line break removed), so
// that a secret the break splits is found whole (see scrub.Scrubber): such
// a block is logged as one line.
func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial[l.seg:], '\n')
		if i >= 0 {
			i += l.seg
		}
		switch {
		case i >= 0 && i <= maxLineBytes:
			if seg := bytes.TrimSuffix(l.partial[l.seg:i], []byte("\r")); scrub.WrappedLine(seg) {
				if i+1 == len(l.partial) {
					return len(p), nil // joined or not: the next byte says
				}
				if strings.IndexByte(scrub.Base64Chars, l.partial[i+1]) >= 0 {
					l.seg += len(seg)
					l.partial = append(l.partial[:l.seg], l.partial[i+1:]...)
					continue
				}
			}
			l.emit(l.partial[:i])
			l.partial, l.seg = l.partial[i+1:], 0
		case len(l.partial) >= maxLineBytes:
			// Not inside a secret: each piece is scrubbed by itself.
			n := cmp.Or(l.scrub.Cut(l.partial[:maxLineBytes]), maxLineBytes)
			l.emit(l.partial[:n])
			l.partial, l.seg = l.partial[n:], max(0, l.seg-n)
		default:
			l.partial = append([]byte(nil), l.partial...) // release consumed bytes
			return len(p), nil
		}
	}
}

// Flush logs an unterminated last line (or a line held to see what
// follows it).
func (l *lineLogger) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.emit(bytes.TrimSuffix(l.partial, []byte("\n")))
		l.partial, l.seg = nil, 0
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
