package config

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Error is one configuration problem, located in the file.
type Error struct {
	File   string // as given to Load or Parse; may be ""
	Line   int    // 1-based; 0 when unknown
	Column int    // 1-based; 0 when unknown
	Field  string // dotted path such as "connectors.files.command"; "" for syntax errors
	Msg    string
}

// Error formats the problem as "file:line:col: field: message".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ":")
	}
	if e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line) + ":")
		if e.Column > 0 {
			b.WriteString(strconv.Itoa(e.Column) + ":")
		}
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Warning is something accepted but worth telling the user about, located
// like an Error.
type Warning Error

// String formats the warning like an Error.
func (w Warning) String() string {
	return (*Error)(&w).Error()
}

// collect turns the problems found into the error Parse returns: nil, the
// single *Error, or the errors.Join of them all sorted by position (its
// message one line each; errors.As finds the first).
func collect(errs []*Error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}
