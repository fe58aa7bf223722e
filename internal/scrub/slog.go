package scrub

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
)

// NewHandler returns a slog.Handler that scrubs the message and the
// attribute values (strings, numbers, errors and anything printed with %+v
// or marshalled to JSON) of every record before h sees it. Secrets added to s later are scrubbed
// from then on, from the attributes bound with WithAttrs before too.
func NewHandler(h slog.Handler, s *Scrubber) slog.Handler {
	return &handler{base: h, s: s}
}

type handler struct {
	base slog.Handler
	s    *Scrubber
	// ops are the WithAttrs (attrs, as given) and WithGroup (group) calls
	// that made this handler from base, in order; bound is base with them
	// applied, the attributes scrubbed by the form set it holds, remade
	// when s's form set changes.
	ops   []op
	bound atomic.Pointer[bound]
}

type op struct {
	attrs []slog.Attr
	group string
}

type bound struct {
	set *formSet
	h   slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.base.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	b := h.current()
	if b.set == nil {
		return b.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return b.h.Handle(ctx, out)
}

// current returns base with h's ops applied, scrubbed by s's form set as
// it is now.
func (h *handler) current() *bound {
	set := h.s.formSet()
	if b := h.bound.Load(); b != nil && b.set == set {
		return b
	}
	b := &bound{set: set, h: h.base}
	for _, o := range h.ops {
		if o.attrs == nil {
			b.h = b.h.WithGroup(o.group)
			continue
		}
		clean := make([]slog.Attr, len(o.attrs))
		for i, a := range o.attrs {
			clean[i] = h.attr(a)
		}
		b.h = b.h.WithAttrs(clean)
	}
	h.bound.Store(b)
	return b
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	return h.with(op{attrs: as})
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.with(op{group: name})
}

func (h *handler) with(o op) *handler {
	return &handler{base: h.base, s: h.s, ops: append(h.ops[:len(h.ops):len(h.ops)], o)}
}

// attr scrubs one attribute's value.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindInt64, slog.KindUint64, slog.KindFloat64:
		// A secret of digits (a PIN, a numeric key) logged as a number.
		if text := v.String(); h.s.Contains(text) {
			return slog.String(a.Key, h.s.String(text))
		}
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, e := range g {
			clean[i] = h.attr(e)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		// Handlers write an error as its Error(), but one that marshals
		// itself (the JSON handler: MarshalJSON; the text handler:
		// MarshalText) or formats itself (%+v, the text handler): such an
		// error is checked below as any value is.
		if err, ok := v.Any().(error); ok {
			switch err.(type) {
			case json.Marshaler, encoding.TextMarshaler, fmt.Formatter:
			default:
				return slog.Any(a.Key, h.s.Error(err))
			}
		}
		// Handlers write a byte slice (json.RawMessage too) as its text or
		// its JSON, not as %v prints it ([104 117 …]).
		if b := reflect.ValueOf(v.Any()); b.Kind() == reflect.Slice && b.Type().Elem().Kind() == reflect.Uint8 {
			if text := string(b.Bytes()); h.s.Contains(text) {
				return slog.String(a.Key, h.s.String(text))
			}
			break
		}
		// The text handler writes %+v (a Stringer's String), the JSON
		// handler what %+v may not show: the fields behind pointers and
		// those of a Stringer; both write a TextMarshaler's text. A value
		// is written as it prints, scrubbed, when that holds a secret, else
		// as it marshals, scrubbed, when that does.
		if text := fmt.Sprintf("%+v", v.Any()); h.s.Contains(text) {
			return slog.String(a.Key, h.s.String(text))
		}
		if j, err := json.Marshal(v.Any()); err == nil && h.s.Contains(string(j)) {
			return slog.Any(a.Key, json.RawMessage(h.s.JSON(j)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
