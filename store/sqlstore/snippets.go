package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// The columns in the order their inserts bind and their scans read them.
const (
	snippetColumns = `name, description, code, input_schema, connectors, from_execution, created_at`
	ownerColumns   = `id, host, pid, boot, process_start, started_at, heartbeat_at, lease`
)

var saveSnippetSQL = `INSERT INTO snippets (` + snippetColumns + `) VALUES ` + values(snippetColumns) + `
	ON CONFLICT (name) DO UPDATE SET description = excluded.description, code = excluded.code,
	  input_schema = excluded.input_schema, connectors = excluded.connectors,
	  from_execution = excluded.from_execution, created_at = excluded.created_at`

var registerOwnerSQL = `INSERT INTO owners (` + ownerColumns + `) VALUES ` + values(ownerColumns)

// SaveSnippet inserts or replaces a snippet by name. A zero CreatedAt is
// set to now.
func (s *Store) SaveSnippet(ctx context.Context, sn codemode.Snippet) error {
	if sn.Name == "" {
		return errors.New("save snippet: empty name")
	}
	conns, err := jsonText(sn.Connectors, len(sn.Connectors) == 0, "connectors")
	if err == nil {
		_, err = s.db.Exec(ctx, saveSnippetSQL, sn.Name, sn.Description, sn.Code, rawText(sn.InputSchema), conns, sn.FromExecution, nanos(stamp(sn.CreatedAt)))
	}
	if err != nil {
		return fmt.Errorf("save snippet %s: %w", sn.Name, err)
	}
	return nil
}

// GetSnippet returns ErrNotFound for an unknown name.
func (s *Store) GetSnippet(ctx context.Context, name string) (*codemode.Snippet, error) {
	sn, err := scanSnippet(s.db.QueryRow(ctx, `SELECT `+snippetColumns+` FROM snippets WHERE name = $1`, name))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("snippet %s: %w", name, codemode.ErrNotFound)
	case errors.Is(err, codemode.ErrUnreadable):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("get snippet %s: %w", name, err)
	}
	return &sn, nil
}

// ListSnippets returns snippets ordered by name, but those it cannot
// read (leftOut).
func (s *Store) ListSnippets(ctx context.Context) ([]codemode.Snippet, error) {
	return collect(ctx, s, "list snippets", `SELECT `+snippetColumns+` FROM snippets ORDER BY name`, nil, scanSnippet)
}

// SnippetStamps returns snippets ordered by name, only their names and
// CreatedAt, but those whose time it cannot read (leftOut).
func (s *Store) SnippetStamps(ctx context.Context) ([]codemode.Snippet, error) {
	return collect(ctx, s, "list snippets", `SELECT name, created_at FROM snippets ORDER BY name`, nil, func(row Row) (codemode.Snippet, error) {
		var (
			sn      codemode.Snippet
			created any
		)
		if err := row.Scan(&sn.Name, &created); err != nil {
			return sn, err
		}
		var err error
		if sn.CreatedAt, err = nanosOf(created, "created_at"); err != nil {
			return sn, unreadable("snippet "+sn.Name, err)
		}
		return sn, nil
	})
}

// DeleteSnippet returns ErrNotFound for an unknown name.
func (s *Store) DeleteSnippet(ctx context.Context, name string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM snippets WHERE name = $1`, name)
	return oneRow(n, err, "delete snippet "+name)
}

// RegisterOwner inserts o; ErrConflict if its id exists. Zero StartedAt
// and Heartbeat are set to now.
func (s *Store) RegisterOwner(ctx context.Context, o codemode.Owner) error {
	if o.ID == "" {
		return errors.New("register owner: empty id")
	}
	started := stamp(o.StartedAt)
	beat := o.Heartbeat
	if beat.IsZero() {
		beat = started
	}
	_, err := s.db.Exec(ctx, registerOwnerSQL, o.ID, o.Host, o.PID, o.Boot, o.ProcessStart, nanos(started), nanos(beat), int64(o.Lease))
	return s.inserted(err, "register owner "+o.ID, codemode.ErrConflict)
}

// Heartbeat sets owner id's heartbeat to at (zero: now); ErrNotFound if it
// is not registered.
func (s *Store) Heartbeat(ctx context.Context, id string, at time.Time) error {
	n, err := s.db.Exec(ctx, `UPDATE owners SET heartbeat_at = $1 WHERE id = $2`, nanos(stamp(at)), id)
	return oneRow(n, err, "heartbeat of owner "+id)
}

// Owners lists the registered owners by id, but those it cannot read
// (leftOut).
func (s *Store) Owners(ctx context.Context) ([]codemode.Owner, error) {
	return collect(ctx, s, "list owners", `SELECT `+ownerColumns+` FROM owners ORDER BY id`, nil, scanOwner)
}

// RemoveOwner deletes owner id; ErrNotFound if absent.
func (s *Store) RemoveOwner(ctx context.Context, id string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM owners WHERE id = $1`, id)
	return oneRow(n, err, "remove owner "+id)
}

// scanSnippet reads snippetColumns; a snippet whose time, connectors or
// input schema cannot be decoded is unreadable (every surface lists
// snippets as JSON, which one schema that is none would fail).
func scanSnippet(row Row) (codemode.Snippet, error) {
	var (
		sn            codemode.Snippet
		schema, conns []byte
		created       any // (nanosOf)
	)
	if err := row.Scan(&sn.Name, &sn.Description, &sn.Code, &schema, &conns, &sn.FromExecution, &created); err != nil {
		return sn, err
	}
	sn.InputSchema = json.RawMessage(schema)
	var err error
	sn.CreatedAt, err = nanosOf(created, "created_at")
	if schema != nil && !json.Valid(schema) {
		err = errors.Join(err, errors.New("column input_schema holds no JSON"))
	}
	if err = errors.Join(err, jsonDecode(conns, &sn.Connectors, "connectors")); err != nil {
		return sn, unreadable("snippet "+sn.Name, err)
	}
	return sn, nil
}

// scanOwner reads ownerColumns; an owner whose numbers or times cannot be
// decoded is unreadable.
func scanOwner(row Row) (codemode.Owner, error) {
	var (
		o                         codemode.Owner
		pid, started, beat, lease any // (intOf)
	)
	if err := row.Scan(&o.ID, &o.Host, &pid, &o.Boot, &o.ProcessStart, &started, &beat, &lease); err != nil {
		return o, err
	}
	var (
		errs    [4]error
		n, nano int64
	)
	n, errs[0] = intOf(pid, "pid")
	nano, errs[1] = intOf(lease, "lease")
	o.PID, o.Lease = int(n), time.Duration(nano)
	o.StartedAt, errs[2] = nanosOf(started, "started_at")
	o.Heartbeat, errs[3] = nanosOf(beat, "heartbeat_at")
	if err := errors.Join(errs[:]...); err != nil {
		return o, unreadable("owner "+o.ID, err)
	}
	return o, nil
}
