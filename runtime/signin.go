package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// ErrNoSignIn is returned (wrapped) by BeginSignIn for a connector that
// has no sign-in (no connectors.Capabilities.SignIner).
var ErrNoSignIn = errors.New("connector has no sign-in")

// BeginSignIn starts the sign-in to connector name (connectors.SignIner)
// of the person ctx names (to a connector with per-user credentials, for
// themselves). The attempt's Wait returns once the tokens are stored and
// the connector's tools listed again, so that an approval made next finds
// them. The caller must Close the attempt. The attempt is audited.
func (r *Runtime) BeginSignIn(ctx context.Context, name string) (_ connectors.SignInAttempt, err error) {
	defer func() { r.audit(ctx, codemode.AuditRecord{Action: codemode.AuditSignIn, Target: name}, err) }()
	return r.beginSignIn(ctx, name)
}

// beginSignIn is BeginSignIn without the audit.
func (r *Runtime) beginSignIn(ctx context.Context, name string) (connectors.SignInAttempt, error) {
	si, err := r.signIner(name, "sign in to")
	if err != nil {
		return nil, err
	}
	a, err := si.BeginSignIn(forUser(ctx, codemode.PersonFrom(ctx).Subject))
	if err != nil {
		return nil, fmt.Errorf("sign in to %s: %w", name, err)
	}
	return &signInAttempt{SignInAttempt: a, r: r, name: name}, nil
}

// signIner is connector name's sign-in, or why it has none for what (a
// request: "sign in to").
func (r *Runtime) signIner(name, what string) (connectors.SignIner, error) {
	s := r.catalog().Connector(name)
	if s == nil {
		return nil, fmt.Errorf("%s %q: unknown connector", what, name)
	}
	if s.Caps.SignIner == nil {
		return nil, fmt.Errorf("%s %s: %w", what, name, ErrNoSignIn)
	}
	return s.Caps.SignIner, nil
}

// signInAttempt is a connector's attempt whose Wait also lists the
// connector's tools again.
type signInAttempt struct {
	connectors.SignInAttempt
	r    *Runtime
	name string
}

func (a *signInAttempt) Wait(ctx context.Context) error {
	if err := a.SignInAttempt.Wait(ctx); err != nil {
		return err
	}
	if _, err := a.r.RefreshConnector(ctx, a.name); err != nil {
		return fmt.Errorf("signed in to %s, but its tools could not be listed: %w", a.name, err)
	}
	return nil
}

// SignOut forgets the tokens of connector name (connectors.SignIner): its
// next call awaits a new sign-in. With per-user credentials, only those of
// the person ctx names.
func (r *Runtime) SignOut(ctx context.Context, name string) error {
	si, err := r.signIner(name, "sign out of")
	if err != nil {
		return err
	}
	return si.SignOut(forUser(ctx, codemode.PersonFrom(ctx).Subject))
}

// forUser is ctx for a request to a connector made for user: its
// CallHook names them, with their access token when ctx is their own
// request.
func forUser(ctx context.Context, user string) context.Context {
	return connectors.WithCallHook(ctx, &connectors.CallHook{User: user, UserToken: tokenOf(ctx, user)})
}

// tokenOf is the access token of ctx's principal when that is user
// (their own request), else "": another person's token is never given
// out for user's calls.
func tokenOf(ctx context.Context, user string) string {
	if p := codemode.PrincipalFrom(ctx); p != nil && p.Subject == user {
		return string(p.Token)
	}
	return ""
}

// signInKey is the key of a background sign-in to connector name by
// person: their own with per-user credentials (another's link would store
// their grant as this person's), else one serving everyone.
func (r *Runtime) signInKey(name string, person codemode.Person) string {
	if s := r.catalog().Connector(name); s != nil && s.Caps.PerUser {
		return name + "\x00" + person.Subject
	}
	return name
}

// AwaitingSignIn returns the paused runs that await a sign-in to
// connector name and nothing but sign-ins, oldest first: resuming one with
// its Review resumes it. A run that awaits an approval too is not listed:
// approving it would approve calls nobody was shown (it waits for its
// approval, which then finds the sign-in made). A run that awaits a
// sign-in to another connector too is listed: resuming it is refused
// (ErrNeedsSignIn) until that sign-in is made too, and the last sign-in
// resumes it.
func (r *Runtime) AwaitingSignIn(ctx context.Context, name string) ([]AwaitingRun, error) {
	return r.awaitingSignIn(ctx, name, false, "")
}

// An AwaitingRun is a run AwaitingSignIn lists, with the Review to resume
// it with (Resume): the digest of its pending actions as listed, so that a
// run that moved on meanwhile (to a call awaiting approval) is not
// approved unseen.
type AwaitingRun struct {
	ID     string
	Review codemode.Review
}

// awaitingSignIn is AwaitingSignIn, keeping only the runs subject started
// when own is set.
func (r *Runtime) awaitingSignIn(ctx context.Context, name string, own bool, subject string) ([]AwaitingRun, error) {
	pending, err := r.Pending(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []AwaitingRun
	for len(pending) > 0 { // one run's actions at a time, oldest run first
		n := 1
		for n < len(pending) && pending[n].ExecutionID == pending[0].ExecutionID {
			n++
		}
		acts := pending[:n]
		pending = pending[n:]
		if (!own || acts[0].StartedBy.Subject == subject) &&
			slices.ContainsFunc(acts, func(p codemode.PendingAction) bool { return p.Connector == name }) &&
			!slices.ContainsFunc(acts, func(p codemode.PendingAction) bool { return p.Awaits != codemode.AwaitsSignIn }) {
			out = append(out, AwaitingRun{ID: acts[0].ExecutionID, Review: codemode.Review{Digest: codemode.PendingDigest(acts)}})
		}
	}
	return out, nil
}

// A BackgroundSignIn is a sign-in StartSignIn began, which the runtime
// waits for.
type BackgroundSignIn struct {
	url   string    // the page the person opens in their browser to sign in
	until time.Time // when the runtime stops waiting for it
	done  chan struct{}
	err   error // set before done closes
}

// Err waits until the sign-in completed and the runs awaiting it were
// resumed, or the sign-in failed, timed out or the runtime closed, and
// returns why it did not complete (nil when it did).
func (b *BackgroundSignIn) Err() error {
	<-b.done
	return b.err
}

// StartSignIn begins a person's sign-in to connector name for a surface
// that does not wait for it (the console, the login command): the runtime
// waits for it in the background, for at most wait, then resumes every
// run awaiting it as Approve does, with no approver. A sign-in to the
// connector under way is returned again rather than another started.
// Close ends the wait.
func (r *Runtime) StartSignIn(ctx context.Context, name string, wait time.Duration) (*BackgroundSignIn, error) {
	who := codemode.PersonFrom(ctx)
	key := r.signInKey(name, who)
	r.mu.Lock()
	if b := r.signIns[key]; b != nil {
		r.mu.Unlock()
		return b, nil
	}
	r.mu.Unlock()
	done, err := r.begin()
	if err != nil {
		return nil, err
	}
	// The attempt outlives the request that started it; what it
	// resumes is decided by the person who started it (Entry.DecidedBy,
	// the audit).
	bg := codemode.WithPerson(r.background, who)
	a, err := r.beginSignIn(bg, name)
	r.audit(ctx, codemode.AuditRecord{Action: codemode.AuditSignIn, Target: name}, err)
	if err != nil {
		done()
		return nil, err
	}
	r.mu.Lock()
	if b := r.signIns[key]; b != nil { // another request started one meanwhile
		r.mu.Unlock()
		a.Close()
		done()
		return b, nil
	}
	b := &BackgroundSignIn{url: a.URL(), until: time.Now().Add(wait), done: make(chan struct{})}
	r.signIns[key] = b
	r.mu.Unlock()
	go func() {
		defer done()
		defer close(b.done)
		defer func() {
			r.mu.Lock()
			delete(r.signIns, key)
			r.mu.Unlock()
		}()
		defer a.Close()
		wctx, cancel := context.WithDeadline(r.background, b.until)
		defer cancel()
		if b.err = a.Wait(wctx); b.err != nil {
			r.log.WarnContext(ctx, "a sign-in did not complete", "connector", name, "err", b.err)
			return
		}
		r.log.InfoContext(ctx, "signed in", "connector", name)
		r.resumeSignedIn(bg, name, who)
	}()
	return b, nil
}

// DefaultSignInWait is how long SignInPage's sign-in is waited for.
const DefaultSignInWait = 15 * time.Minute

// SignInPage starts the background sign-in to connector name (or finds the
// one under way), waited for DefaultSignInWait, and returns its page and
// until when, for a surface that only shows where to go (the console).
func (r *Runtime) SignInPage(ctx context.Context, name string) (string, time.Time, error) {
	b, err := r.StartSignIn(ctx, name, DefaultSignInWait)
	if err != nil {
		return "", time.Time{}, err
	}
	return b.url, b.until, nil
}

// resumeSignedIn approves every run awaiting a sign-in to connector name,
// logging each outcome; with per-user credentials, only the runs who
// signed in started.
func (r *Runtime) resumeSignedIn(ctx context.Context, name string, who codemode.Person) {
	runs, err := r.awaitingSignIn(ctx, name, r.signInKey(name, who) != name, who.Subject)
	if err != nil {
		r.log.WarnContext(ctx, "could not list the runs awaiting a sign-in", "connector", name, "err", err)
		return
	}
	for _, a := range runs {
		o, err := r.Resume(ctx, a.ID, a.Review)
		switch {
		case errors.Is(err, codemode.ErrNeedsSignIn):
			r.log.InfoContext(ctx, "a run awaiting this sign-in awaits another too; it resumes once that one is made", "execution", a.ID, "connector", name, "err", err)
			continue
		case err != nil:
			r.log.WarnContext(ctx, "could not resume a run after its sign-in", "execution", a.ID, "connector", name, "err", err)
			continue
		}
		r.log.InfoContext(ctx, "resumed a run after its sign-in", "execution", a.ID, "connector", name, "status", o.Status.String())
	}
}
