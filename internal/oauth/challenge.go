package oauth

import (
	"strings"
)

// A Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// section 11.6.1): a scheme with either a token68 or parameters.
type Challenge struct {
	// Scheme is the scheme as written ("Bearer"); compare it with
	// strings.EqualFold.
	Scheme string
	// Token68 is the challenge's token68, if it has one instead of
	// parameters.
	Token68 string
	// Params holds the parameters by lower-cased name; a name given twice
	// keeps its first value.
	Params map[string]string
}

// maxChallengeHeader bounds the WWW-Authenticate text parsed (all of a
// response's headers together); the rest is ignored.
const maxChallengeHeader = 16 << 10

// ParseChallenges parses the values of a response's WWW-Authenticate
// headers: each may hold several challenges, separated by commas, whose
// parameters are tokens or quoted strings with backslash escapes. A
// malformed part ends the parsing of its header value; what was parsed
// before it is kept.
func ParseChallenges(values []string) []Challenge {
	var out []Challenge
	budget := maxChallengeHeader
	for _, v := range values {
		if budget <= 0 {
			break
		}
		if len(v) > budget {
			v = v[:budget]
		}
		budget -= len(v)
		p := &challengeParser{s: v}
		out = append(out, p.all()...)
	}
	return out
}

// challengeParser reads challenges from one header value.
type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) all() []Challenge {
	var out []Challenge
	for {
		p.skip(" \t,")
		scheme := p.token()
		if scheme == "" {
			return out // the end, or not a challenge: give up on the rest
		}
		out = append(out, Challenge{Scheme: scheme, Params: map[string]string{}})
		c := &out[len(out)-1]
		if !p.at(" \t,") {
			return out // "Bearer;…": keep the scheme, drop the rest
		}
		p.skip(" \t")
		if t, ok := p.token68(); ok {
			c.Token68 = t
		} else if !p.params(c.Params) {
			return out
		}
	}
}

// params reads auth-params into m until the next challenge starts (a
// token not followed by "="; empty list elements are skipped), the value
// ends, or the syntax breaks (false).
func (p *challengeParser) params(m map[string]string) bool {
	for {
		p.skip(" \t,")
		name, ok := p.paramName()
		if !ok {
			return true
		}
		p.skip(" \t")
		var val string
		if p.at(`"`) {
			val, ok = p.quoted()
		} else {
			val = p.token()
			ok = val != ""
		}
		if !ok {
			return false
		}
		key := strings.ToLower(name)
		if _, dup := m[key]; !dup {
			m[key] = val
		}
		p.skip(" \t")
		if p.i < len(p.s) && !p.at(",") {
			return false
		}
	}
}

// paramName reads a token followed by "=" (the "=" too), or nothing
// (false).
func (p *challengeParser) paramName() (string, bool) {
	start := p.i
	name := p.token()
	p.skip(" \t")
	if name == "" || !p.at("=") {
		p.i = start
		return "", false
	}
	p.i++
	return name, true
}

// at reports whether the byte at p.i is one of chars.
func (p *challengeParser) at(chars string) bool {
	return p.i < len(p.s) && strings.IndexByte(chars, p.s[p.i]) >= 0
}

// token68 reads a token68 standing alone (followed by the end or a comma),
// and reports whether there was one; otherwise it reads nothing.
func (p *challengeParser) token68() (string, bool) {
	start := p.i
	if p.span(func(c byte) bool { return isIn(c, token68Chars) }) == "" {
		return "", false
	}
	p.skip("=")
	t := p.s[start:p.i]
	p.skip(" \t")
	if p.i < len(p.s) && !p.at(",") {
		p.i = start
		return "", false
	}
	return t, true
}

// quoted reads a quoted-string, undoing backslash escapes.
func (p *challengeParser) quoted() (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), true
		case c == '\\' && p.i+1 < len(p.s):
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", false // unterminated
}

func (p *challengeParser) token() string {
	return p.span(func(c byte) bool { return isIn(c, tokenChars) })
}

// skip moves past any of chars: spaces and tabs (" \t"), list
// separators too (" \t,").
func (p *challengeParser) skip(chars string) {
	for p.at(chars) {
		p.i++
	}
}

// span reads the longest run of bytes for which ok holds.
func (p *challengeParser) span(ok func(byte) bool) string {
	start := p.i
	for p.i < len(p.s) && ok(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// Besides letters and digits, the characters of an RFC 9110 token and of
// a token68.
const (
	tokenChars   = "!#$%&'*+-.^_`|~"
	token68Chars = "-._~+/"
)

// isIn reports whether c is a letter, a digit or one of others.
func isIn(c byte, others string) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(others, c) >= 0
}

// bearer is what a Bearer challenge says (RFC 6750 section 3, RFC 9728
// section 5.1).
type bearer struct {
	found            bool
	resourceMetadata string
	scopes           []string
	err              string
}

// bearerChallenge finds the first Bearer challenge among a response's
// WWW-Authenticate values.
func bearerChallenge(values []string) bearer {
	for _, c := range ParseChallenges(values) {
		if !strings.EqualFold(c.Scheme, "Bearer") {
			continue
		}
		return bearer{
			found:            true,
			resourceMetadata: c.Params["resource_metadata"],
			scopes:           strings.Fields(c.Params["scope"]),
			err:              c.Params["error"],
		}
	}
	return bearer{}
}
