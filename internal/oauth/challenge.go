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
// headers. Each is a list, separated by commas, of challenges (a scheme,
// then a token68 or a first parameter) and of the parameters that join
// the challenge before them; a parameter's value is a token or a quoted
// string with backslash escapes. A malformed element ends the parsing of
// its header value; what was parsed before it is kept.
func ParseChallenges(values []string) []Challenge {
	var out []Challenge
	budget := maxChallengeHeader
	for _, v := range values {
		v = v[:min(len(v), max(budget, 0))]
		budget -= len(v)
		out = append(out, challenges(v)...)
	}
	return out
}

// challenges parses one header value.
func challenges(v string) []Challenge {
	var out []Challenge
	for _, e := range elements(v) {
		if len(out) > 0 && out[len(out)-1].Token68 == "" {
			if name, val, after, ok := param(e); ok {
				if _, dup := out[len(out)-1].Params[name]; !dup {
					out[len(out)-1].Params[name] = val
				}
				if after != "" {
					return out // "a=b c": keep a, drop the rest
				}
				continue
			}
		}
		scheme := prefix(e, tokenChars)
		rest := strings.TrimLeft(e[len(scheme):], " \t")
		if scheme == "" || strings.HasPrefix(rest, "=") {
			return out // not a challenge (a malformed parameter): give up on the rest
		}
		out = append(out, Challenge{Scheme: scheme, Params: map[string]string{}})
		c := &out[len(out)-1]
		switch name, val, after, ok := param(rest); {
		case rest == "":
		case len(rest) == len(e)-len(scheme):
			return out // "Bearer;…": keep the scheme, drop the rest
		case ok:
			c.Params[name] = val
			if after != "" {
				return out
			}
		case strings.Trim(rest[len(prefix(rest, token68Chars)):], "=") == "":
			c.Token68 = rest
		default:
			return out
		}
	}
	return out
}

// elements splits a header value at the commas outside quoted strings,
// each element trimmed of spaces and empty ones left out; an element
// whose quoted string does not end ends the list.
func elements(v string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i <= len(v); i++ {
		switch {
		case i == len(v) && quoted:
			return out
		case i == len(v) || v[i] == ',' && !quoted:
			if e := strings.Trim(v[start:i], " \t"); e != "" {
				out = append(out, e)
			}
			start = i + 1
		case v[i] == '"':
			quoted = !quoted
		case v[i] == '\\' && quoted:
			i++
		}
	}
	return out
}

// param reads the auth-param that e starts with, token BWS "=" BWS
// (token / quoted-string): its name in lower case, its value, and what
// follows it (trimmed; "" in a well-formed element).
func param(e string) (name, value, after string, ok bool) {
	name = prefix(e, tokenChars)
	rest, eq := strings.CutPrefix(strings.TrimLeft(e[len(name):], " \t"), "=")
	rest = strings.TrimLeft(rest, " \t")
	if name == "" || !eq || rest == "" {
		return "", "", "", false
	}
	name = strings.ToLower(name)
	if rest[0] != '"' {
		value = prefix(rest, tokenChars)
		return name, value, strings.TrimLeft(rest[len(value):], " \t"), value != ""
	}
	var b strings.Builder
	for i := 1; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == '"':
			return name, b.String(), strings.TrimLeft(rest[i+1:], " \t"), true
		case c == '\\' && i+1 < len(rest):
			i++
			b.WriteByte(rest[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", "", "", false
}

// prefix is the longest start of s made of letters, digits and others.
func prefix(s, others string) string {
	i := 0
	for i < len(s) && isIn(s[i], others) {
		i++
	}
	return s[:i]
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
	err, description string
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
			description:      c.Params["error_description"],
		}
	}
	return bearer{}
}

// Refusal is what a 401's WWW-Authenticate values say of why the server
// refused the request, for a message: the Bearer challenge's error code
// and error_description (RFC 6750 section 3), else the scheme it asks
// for; on one line, bounded, control characters removed; "" when they say
// nothing. The server's text may echo what was sent: the caller scrubs it.
func Refusal(values []string) string {
	ch := bearerChallenge(values)
	if !ch.found {
		if cs := ParseChallenges(values); len(cs) > 0 {
			return "it asks for " + clean(cs[0].Scheme, 64) + " authentication"
		}
		return ""
	}
	code, desc := clean(ch.err, 64), clean(ch.description, maxErrorText)
	if code != "" && desc != "" {
		return code + ": " + desc
	}
	return code + desc
}
