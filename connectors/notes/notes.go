// Package notes is the built-in native connector: short notes with tags,
// kept in the same SQLite file as the execution log. It is the example of a
// native connector: listNotes is read-only; createNote requires approval and
// is revertible (a rollback deletes the note); deleteNote is destructive and
// requires approval too.
//
// The package uses SQLite SQL (JSON functions) through a *sql.DB it is
// given; it does not import a driver.
package notes

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// Name is the connector's global name in the sandbox.
const Name = "notes"

const (
	defaultLimit     = 100
	defaultLimitText = "100"
	maxLimit         = 1000
	maxLimitText     = "1000"
)

// Notes is the notes connector. It is safe for concurrent use; it keeps no
// state besides the database, which the caller owns.
type Notes struct {
	db *sql.DB
}

var (
	_ connectors.Connector = (*Notes)(nil)
	_ connectors.Reverter  = (*Notes)(nil)
)

// New returns the connector on db (a SQLite database), creating its table
// if absent.
func New(ctx context.Context, db *sql.DB) (*Notes, error) {
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS notes (
			id         TEXT    PRIMARY KEY NOT NULL,
			text       TEXT    NOT NULL,
			tags       TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
			created_at INTEGER NOT NULL               -- Unix nanoseconds
		)`,
		`CREATE INDEX IF NOT EXISTS notes_created_at ON notes (created_at)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("notes: create table: %w", err)
		}
	}
	return &Notes{db: db}, nil
}

// Name returns "notes".
func (n *Notes) Name() string { return Name }

// Tools returns listNotes, createNote and deleteNote.
func (n *Notes) Tools(ctx context.Context) ([]connectors.Tool, error) {
	return slices.Clone(tools), nil
}

// Close does nothing: the database belongs to the caller. It is safe to
// call more than once.
func (n *Notes) Close() error { return nil }

// Call runs a tool. Bad arguments are reported in the Result (IsError, with
// a message naming the field); err is for database failures and unknown
// tools (wrapping connectors.ErrUnknownTool).
func (n *Notes) Call(ctx context.Context, tool string, args json.RawMessage) (connectors.Result, error) {
	var (
		v   any
		err error
	)
	switch tool {
	case ToolList:
		var a listArgs
		if err := a.parse(args); err != nil {
			return badArgs(tool, err), nil
		}
		v, err = n.list(ctx, a)
	case ToolCreate:
		var a createArgs
		if err := a.parse(args); err != nil {
			return badArgs(tool, err), nil
		}
		v, err = n.create(ctx, a)
	case ToolDelete:
		var a deleteArgs
		if err := a.parse(args); err != nil {
			return badArgs(tool, err), nil
		}
		v, err = n.delete(ctx, a.ID)
	default:
		return connectors.Result{}, fmt.Errorf("notes: %w %q (have %s, %s, %s)", connectors.ErrUnknownTool, tool, ToolList, ToolCreate, ToolDelete)
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

func badArgs(tool string, err error) connectors.Result {
	return connectors.Result{IsError: true, Message: fmt.Sprintf("notes.%s: %v", tool, err)}
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

func (n *Notes) list(ctx context.Context, a listArgs) (listResult, error) {
	q := `SELECT id, text, tags, created_at FROM notes`
	var args []any
	if a.Tag != nil {
		q += ` WHERE EXISTS (SELECT 1 FROM json_each(notes.tags) WHERE json_each.value = ?)`
		args = append(args, *a.Tag)
	}
	q += ` ORDER BY created_at DESC, rowid DESC LIMIT ?`
	args = append(args, a.Limit)
	rows, err := n.db.QueryContext(ctx, q, args...)
	if err != nil {
		return listResult{}, fmt.Errorf("list: %w", err)
	}
	defer rows.Close()
	out := listResult{Notes: []note{}}
	for rows.Next() {
		var (
			nt      note
			tags    string
			created int64
		)
		if err := rows.Scan(&nt.ID, &nt.Text, &tags, &created); err != nil {
			return listResult{}, fmt.Errorf("list: %w", err)
		}
		if err := json.Unmarshal([]byte(tags), &nt.Tags); err != nil {
			return listResult{}, fmt.Errorf("list: note %s: decode tags: %w", nt.ID, err)
		}
		if nt.Tags == nil {
			nt.Tags = []string{}
		}
		nt.CreatedAt = formatTime(time.Unix(0, created))
		out.Notes = append(out.Notes, nt)
	}
	if err := rows.Err(); err != nil {
		return listResult{}, fmt.Errorf("list: %w", err)
	}
	return out, nil
}

func (n *Notes) create(ctx context.Context, a createArgs) (note, error) {
	id, err := newID()
	if err != nil {
		return note{}, err
	}
	created := time.Now().UTC().Truncate(time.Millisecond)
	tags, err := json.Marshal(a.Tags)
	if err != nil {
		return note{}, fmt.Errorf("encode tags: %w", err)
	}
	_, err = n.db.ExecContext(ctx, `INSERT INTO notes (id, text, tags, created_at) VALUES (?, ?, ?, ?)`,
		id, a.Text, string(tags), created.UnixNano())
	if err != nil {
		return note{}, fmt.Errorf("create: %w", err)
	}
	return note{ID: id, Text: a.Text, Tags: a.Tags, CreatedAt: formatTime(created)}, nil
}

func (n *Notes) delete(ctx context.Context, id string) (deleteResult, error) {
	res, err := n.db.ExecContext(ctx, `DELETE FROM notes WHERE id = ?`, id)
	if err != nil {
		return deleteResult{}, fmt.Errorf("delete %s: %w", id, err)
	}
	c, err := res.RowsAffected()
	if err != nil {
		return deleteResult{}, fmt.Errorf("delete %s: %w", id, err)
	}
	return deleteResult{Deleted: c > 0}, nil
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
