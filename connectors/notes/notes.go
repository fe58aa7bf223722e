// Package notes is the built-in native connector: short notes with tags,
// kept in the execution log's database (connectors.Records: SQLite or
// PostgreSQL, whichever the store is). It is the example of a
// native connector: listNotes is read-only; createNote requires approval and
// is revertible (a rollback deletes the note); deleteNote is destructive and
// requires approval too.
//
// A note is a record of kind "notes" whose value is {"text", "tags"}.
package notes

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/schemacheck"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// Name is the builtin's name in the configuration (builtin: notes), and
// its global's name unless the configuration names it otherwise.
const Name = "notes"

// Kind is the kind of the connector's records (connectors.Records),
// whatever the connector is named.
const Kind = "notes"

const (
	defaultLimit = 100
	maxLimit     = 1000
)

// Notes is the notes connector. It is safe for concurrent use; it keeps no
// state besides its records, which the caller owns.
type Notes struct {
	name    string
	records connectors.Records
	// Logger receives the notes listNotes leaves out because they cannot
	// be read (nil: they are left out unsaid). Set it before the first
	// call.
	Logger *slog.Logger
}

var _ connectors.Connector = (*Notes)(nil)

// New returns the connector named name (its global in the sandbox: Name,
// or the name the configuration gives it) on records (the store's).
func New(name string, records connectors.Records) *Notes {
	return &Notes{name: name, records: records}
}

// Name returns the connector's name, given to New.
func (n *Notes) Name() string { return n.name }

// Capabilities: a rollback deletes the notes the run created (Revert).
func (n *Notes) Capabilities() connectors.Capabilities {
	return connectors.Capabilities{Reverter: n}
}

// Tools returns listNotes, createNote and deleteNote.
func (n *Notes) Tools(ctx context.Context) ([]connectors.Tool, error) {
	return slices.Clone(tools), nil
}

// Close does nothing: the records belong to the caller. It is safe to
// call more than once.
func (n *Notes) Close() error { return nil }

// Call runs a tool. Bad arguments are reported in the Result (IsError, with
// a message naming the field); err is for database failures and unknown
// tools (wrapping connectors.ErrUnknownTool).
func (n *Notes) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	var v any
	var bad, err error // bad: the arguments'
	const what = "arguments"
	switch tool {
	case ToolList:
		var a *listArgs
		if a, bad = schemacheck.Decode[listArgs](listSchema, what, args); bad == nil {
			v, err = n.list(ctx, *a)
		}
	case ToolCreate:
		var a *createArgs
		if a, bad = schemacheck.Decode[createArgs](createSchema, what, args); bad == nil {
			v, err = n.create(ctx, *a)
		}
	case ToolDelete:
		var a *deleteArgs
		if a, bad = schemacheck.Decode[deleteArgs](deleteSchema, what, args); bad == nil {
			v, err = n.delete(ctx, a.ID)
		}
	default:
		return connectors.Result{}, fmt.Errorf("notes: %w %q (have %s, %s, %s)", connectors.ErrUnknownTool, tool, ToolList, ToolCreate, ToolDelete)
	}
	if bad != nil {
		return connectors.Result{IsError: true, Message: fmt.Sprintf("notes.%s: %v", tool, bad)}, nil
	}
	if err != nil {
		return connectors.Result{}, fmt.Errorf("notes.%s: %w", tool, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return connectors.Result{}, fmt.Errorf("notes.%s: encode result: %w", tool, err)
	}
	return connectors.Result{Value: b}, nil
}

// note is a note as the tools return it.
type note struct {
	ID        string   `json:"id"`
	Text      string   `json:"text"`
	Tags      []string `json:"tags"`
	CreatedAt string   `json:"createdAt"`
}

type listResult struct {
	Notes []note `json:"notes"`
}

type deleteResult struct {
	Deleted bool `json:"deleted"`
}

// list scans the notes newest first, keeping those with the tag, up to
// the limit. (Notes are scratch notes: a scan of them is cheap.) A note
// whose value is not a note (a hand edit, another program) is left out
// and logged, as the store leaves out a row it cannot read: one bad note
// must not hide the others.
func (n *Notes) list(ctx context.Context, a listArgs) (listResult, error) {
	limit := cmp.Or(int(a.Limit), defaultLimit)
	out := listResult{Notes: []note{}}
	err := n.records.ScanRecords(ctx, Kind, func(r connectors.Record) bool {
		var v createArgs // a record's value
		if err := json.Unmarshal(r.Value, &v); err != nil {
			if n.Logger != nil {
				n.Logger.WarnContext(ctx, "a note cannot be read; listNotes leaves it out (fix or delete it)", "connector", n.name, "note", short.Clip(r.ID, 128), "err", err)
			}
			return true
		}
		if a.Tag != nil && !slices.Contains(v.Tags, *a.Tag) {
			return true
		}
		if v.Tags == nil {
			v.Tags = []string{}
		}
		out.Notes = append(out.Notes, note{ID: r.ID, Text: v.Text, Tags: v.Tags, CreatedAt: formatTime(r.CreatedAt)})
		return len(out.Notes) < limit
	})
	if err != nil {
		return listResult{}, fmt.Errorf("list: %w", err)
	}
	return out, nil
}

// create keeps the note's tags in the order given, without repeats.
func (n *Notes) create(ctx context.Context, a createArgs) (note, error) {
	tags := []string{}
	for _, t := range a.Tags {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	a.Tags = tags
	id, err := newID()
	if err != nil {
		return note{}, err
	}
	created := time.Now().UTC().Truncate(time.Millisecond)
	value, err := json.Marshal(a)
	if err != nil {
		return note{}, fmt.Errorf("encode note: %w", err)
	}
	if err := n.records.PutRecord(ctx, connectors.Record{Kind: Kind, ID: id, Value: value, CreatedAt: created}); err != nil {
		return note{}, fmt.Errorf("create: %w", err)
	}
	return note{ID: id, Text: a.Text, Tags: a.Tags, CreatedAt: formatTime(created)}, nil
}

func (n *Notes) delete(ctx context.Context, id string) (deleteResult, error) {
	ok, err := n.records.DeleteRecord(ctx, Kind, id)
	if err != nil {
		return deleteResult{}, fmt.Errorf("delete %s: %w", id, err)
	}
	return deleteResult{Deleted: ok}, nil
}

// newID returns "note_" and 16 random hex digits.
func newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new note id: %w", err)
	}
	return "note_" + hex.EncodeToString(b[:]), nil
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
