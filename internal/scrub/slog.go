package scrub

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
)

// NewHandler returns a slog.Handler that scrubs the message and the
// attribute values (strings, errors and anything printed with %v) of every
// record before h sees it. Secrets added to s later are scrubbed from then
// on.
func NewHandler(h slog.Handler, s *Scrubber) slog.Handler {
	return &handler{h: h, s: s}
}

type handler struct {
	h slog.Handler
	s *Scrubber
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if h.s.Empty() {
		return h.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = h.attr(a)
	}
	return &handler{h: h.h.WithAttrs(clean), s: h.s}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{h: h.h.WithGroup(name), s: h.s}
}

// attr scrubs one attribute's value.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, e := range g {
			clean[i] = h.attr(e)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.Any(a.Key, h.s.Error(err))
		}
		// Handlers write a byte slice (json.RawMessage too) as its text or
		// its JSON, not as %v prints it ([104 117 …]).
		if b := reflect.ValueOf(v.Any()); b.Kind() == reflect.Slice && b.Type().Elem().Kind() == reflect.Uint8 {
			if text := string(b.Bytes()); h.s.Contains(text) {
				return slog.String(a.Key, h.s.String(text))
			}
			break
		}
		if text := fmt.Sprint(v.Any()); h.s.Contains(text) {
			return slog.String(a.Key, h.s.String(text))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
