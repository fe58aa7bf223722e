package codemode

import (
	"context"
	"time"
)

// A Person is who started a run or made a decision, as the run's log
// keeps it: the identity part of a Principal (its subject, and its name
// and email when the token had them), never the token's claim set. A run
// or decision made without a signed-in person (stdio, the static bearer
// token, the command line) is Local's, or, from the command line, Local
// with the operating system's user name (WithPerson).
type Person struct {
	// Subject is who the person is at the issuer (the token's sub);
	// LocalSubject for the one local user.
	Subject string `json:"subject"`
	Name    string `json:"name,omitempty"`
	Email   string `json:"email,omitempty"`
}

// LocalSubject is the subject of everything done without an issuer: the
// one user of a server on stdio or behind the static token, or of the
// command line on the server's machine.
const LocalSubject = "local"

// Local is the person of a server without an issuer.
var Local = Person{Subject: LocalSubject}

// IsZero reports whether p names nobody (a run logged before people were
// recorded).
func (p Person) IsZero() bool { return p.Subject == "" }

// Display is how the person is named to people: "Name <email>", the name,
// the email, or the subject. The local user is named "local" wherever a
// run started, with the name the command line records beside it
// ("local (ana)"), so that a run started on stdio and one started on the
// command line do not read as two people's.
func (p Person) Display() string {
	switch {
	case p.Subject == LocalSubject && p.Name != "":
		return LocalSubject + " (" + p.Name + ")"
	case p.Name != "" && p.Email != "":
		return p.Name + " <" + p.Email + ">"
	case p.Name != "":
		return p.Name
	case p.Email != "":
		return p.Email
	}
	return p.Subject
}

// Person is the identity part of the principal.
func (p *Principal) Person() Person {
	if p == nil {
		return Person{}
	}
	return Person{Subject: p.Subject, Name: p.Name, Email: p.Email}
}

type personKey struct{}

// WithPerson returns ctx carrying p as who acts when no principal does:
// the command line names the operating system's user this way.
func WithPerson(ctx context.Context, p Person) context.Context {
	return context.WithValue(ctx, personKey{}, p)
}

// PersonFrom returns who acts in ctx: the principal's person, else the
// person WithPerson set, else Local.
func PersonFrom(ctx context.Context) Person {
	if p := PrincipalFrom(ctx); p != nil {
		return p.Person()
	}
	if p, ok := ctx.Value(personKey{}).(Person); ok && !p.IsZero() {
		return p
	}
	return Local
}

// AuditAction is what an audit record says was done.
type AuditAction string

const (
	// AuditRun: a person started a run (Outcome: the status it reached
	// first: running, or the refusal).
	AuditRun AuditAction = "run"
	// AuditApprove, AuditReject, AuditRollback and AuditCancel are a
	// person's decisions about a run.
	AuditApprove  AuditAction = "approve"
	AuditReject   AuditAction = "reject"
	AuditRollback AuditAction = "rollback"
	AuditCancel   AuditAction = "cancel"
	// AuditSignIn: a person began signing in to a connector (Target).
	AuditSignIn AuditAction = "sign_in"
	// AuditView: a person asked to see a run the policy hides from them
	// (only these refusals are recorded, not every view).
	AuditView AuditAction = "view"
	// AuditLogin and AuditLogout: a person signed in to the approval
	// console through the issuer, or logged out of it (Source says
	// where: SourceConsole).
	AuditLogin  AuditAction = "login"
	AuditLogout AuditAction = "logout"
	// AuditDelete: the local operator deleted a run whose row the store
	// cannot read (ErrUnreadable); a readable run's deletion is audited
	// only as the rejection it makes of a paused run.
	AuditDelete AuditAction = "delete"
)

// SourceConsole is the Source of what a person did in the approval
// console.
const SourceConsole = "console"

type sourceKey struct{}

// WithSource returns ctx carrying the surface a request came through
// (SourceConsole), for the audit records its actions write.
func WithSource(ctx context.Context, source string) context.Context {
	return context.WithValue(ctx, sourceKey{}, source)
}

// SourceFrom returns the surface WithSource set, or "".
func SourceFrom(ctx context.Context) string {
	s, _ := ctx.Value(sourceKey{}).(string)
	return s
}

// AuditOutcome words of an audit record; a refusal's Outcome is
// "refused: " and the reason the person was given.
const (
	AuditOK      = "ok"
	AuditRefused = "refused"
)

// An AuditRecord is one line of the audit: who did what to which run and
// when, and how it ended. It never holds arguments or results (they may
// hold secrets): only ids, the connector and method a decision was about,
// the person and the outcome.
type AuditRecord struct {
	// ID orders the records (assigned by the store).
	ID     int64       `json:"id"`
	At     time.Time   `json:"at"`
	Person Person      `json:"person"`
	Action AuditAction `json:"action"`
	// ExecutionID is the run acted on ("" for a sign-in).
	ExecutionID string `json:"executionId,omitempty"`
	// Seq is the pending action decided, when one was named.
	Seq int `json:"seq,omitempty"`
	// Target is what the decision was about: "connector.method" of each
	// action it decided (comma-separated), or a connector's name.
	Target string `json:"target,omitempty"`
	// Outcome is AuditOK, the run's status after the decision, or
	// "refused: <why>".
	Outcome string `json:"outcome"`
	// Source is the surface the action came through, when it says
	// (SourceConsole); "" for the MCP tools, tasks and the command line.
	Source string `json:"source,omitempty"`
}

// AuditQuery selects audit records to read, oldest first.
type AuditQuery struct {
	// Since leaves out records before it (zero: from the first).
	Since time.Time
	// ExecutionID, when set, keeps only the records about that run.
	ExecutionID string
	// Limit is the most records returned; 0: every one.
	Limit int
}
