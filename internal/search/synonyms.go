package search

import "strings"

// variant is one term a query word stands for, with the weight of a match
// on it (1 for the word itself).
type variant struct {
	term   string
	weight float64
}

// synonymGroups are words a model uses for one another when it asks for a
// method: every word of a group finds the others at the group's weight.
// They are general vocabulary of APIs (verbs of create, read, update and
// delete, and common nouns), never words of one particular API.
var synonymGroups = []struct {
	weight float64
	words  string
}{
	{0.7, "create add new open make post insert"},
	{0.6, "create write save store put"},
	{0.5, "update write save store put"},
	{0.8, "delete remove drop destroy erase"},
	{0.7, "update edit change modify set rename patch"},
	{0.6, "get read fetch retrieve show view see inspect detail"},
	{0.6, "list enumerate browse"},
	{0.4, "get list"},
	{0.7, "search find query lookup locate"},
	{0.6, "send trigger dispatch run start launch execute invoke fire"},
	{0.7, "stop cancel abort halt terminate kill"},
	{0.7, "sum add plus total"},
	{0.7, "copy duplicate clone"},
	{0.6, "upload attach"},
	{0.7, "move transfer relocate"},
	{0.6, "user person people account someone somebody"},
	{0.7, "image picture photo icon"},
	{0.7, "note memo"},
	{0.7, "comment reply remark"},
	{0.7, "issue ticket bug"},
	{0.8, "email mail"},
	{0.6, "entity node item record"},
	{0.6, "link relation connection relationship association"},
	{0.7, "star favorite bookmark"},
	{0.6, "setting configuration preference option"},
	{0.7, "error failure fault"},
	// Verbs (26–30: verbGroups).
	{0.6, "request ask"},
	{0.6, "redeliver resend retry"},
	{0.5, "create publish"},
	{0.5, "add grant give"},
	{0.5, "enable disable set"},
	// Words developers use for those verbs and nouns (not in verbGroups:
	// their verbs are in moreVerbs).
	{0.6, "delete wipe purge nuke trash scrap discard"},
	{0.5, "create file register raise draft compose cut"},
	{0.6, "get grab"},
	{0.6, "remove kick boot expel evict"},
	{0.6, "block ban bar blacklist"},
	{0.5, "label tag"},
	{0.6, "reaction react upvote thumb"},
	{0.5, "update tweak bump toggle flip adjust amend"},
}

// directed are expansions that hold one way only: a model that writes "my"
// means the authenticated user, but "authenticated" does not mean "my".
var directed = map[string][]string{
	"my":      {"authenticated"},
	"me":      {"authenticated"},
	"mine":    {"authenticated"},
	"myself":  {"authenticated"},
	"i":       {"authenticated"},
	"current": {"authenticated"},
	"self":    {"authenticated"},
}

// directedWeight is the weight of a directed expansion.
const directedWeight = 0.6

// synonyms maps a query word's stem to its other variants.
var synonyms = map[string][]variant{}

func init() {
	add := func(from, to string, w float64) {
		if from == to {
			return
		}
		for i, v := range synonyms[from] {
			if v.term == to {
				synonyms[from][i].weight = max(v.weight, w)
				return
			}
		}
		synonyms[from] = append(synonyms[from], variant{to, w})
	}
	for _, g := range synonymGroups {
		ws := strings.Fields(g.words)
		for _, a := range ws {
			for _, b := range ws {
				add(Stem(a), Stem(b), g.weight)
			}
		}
	}
	for i, g := range synonymGroups {
		if verbGroups[i] {
			for _, w := range strings.Fields(g.words) {
				verbs[Stem(w)] = true
			}
		}
	}
	for _, w := range strings.Fields(moreVerbs) {
		verbs[Stem(w)] = true
	}
	for from, tos := range directed {
		for _, to := range tos {
			add(from, Stem(to), directedWeight)
		}
	}
}

// verbs are words that say what to do. A query without one ("dependabot
// alerts", "reviews on a pull request") asks to read: it gets a soft
// concept that favours list and get methods without counting as a word of
// the query.
var verbs = map[string]bool{}

// verbGroups are the synonym groups of verbs (their words are verbs);
// moreVerbs are verbs that have no synonyms here.
var verbGroups = map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true, 10: true, 12: true, 13: true, 14: true,
	26: true, 27: true, 28: true, 29: true, 30: true}

// phrasalVerbs are two-word verbs a query may use, read as the one verb
// they mean ("turn off Actions" asks to disable them).
var phrasalVerbs = map[[2]string]string{
	{"turn", "off"}: "disable", {"switch", "off"}: "disable", {"shut", "off"}: "disable",
	{"turn", "on"}: "enable", {"switch", "on"}: "enable",
	{"set", "up"}: "create", {"spin", "up"}: "create", {"stand", "up"}: "create",
	{"look", "up"}: "get", {"find", "out"}: "get",
	{"clean", "up"}: "delete", {"kick", "off"}: "trigger",
	{"shut", "down"}: "stop", {"take", "down"}: "delete", {"tear", "down"}: "delete",
	{"kick", "out"}: "remove", {"roll", "back"}: "revert", {"bring", "back"}: "restore",
	{"pull", "up"}: "get", {"hand", "over"}: "transfer", {"sign", "off"}: "approve",
	{"thumbs", "up"}: "react", {"thumb", "up"}: "react",
}

// joinPhrasal replaces each phrasal verb of words with the verb it means.
// A pronoun may stand between the two words ("turn it off").
func joinPhrasal(words []string) []string {
	out := words[:0:0]
	for i := 0; i < len(words); i++ {
		if i+1 < len(words) {
			if v, ok := phrasalVerbs[[2]string{words[i], words[i+1]}]; ok {
				out = append(out, v)
				i++
				continue
			}
		}
		if i+2 < len(words) && pronouns[words[i+1]] {
			if v, ok := phrasalVerbs[[2]string{words[i], words[i+2]}]; ok {
				out = append(out, v, words[i+1])
				i += 2
				continue
			}
		}
		out = append(out, words[i])
	}
	return out
}

// pronouns may stand between the words of a phrasal verb.
var pronouns = setOf(`it them this that these those him her me us`)

const moreVerbs = `merge star unstar fork lock unlock approve assign unassign download
	render rerun cancel enable disable check mark follow unfollow watch unwatch
	invite accept transfer archive unarchive publish sync dismiss submit request
	compare protect reopen close revoke block unblock ping test redeliver
	suspend unsuspend install uninstall subscribe unsubscribe rename replace
	reset restore revert approve reject review resolve
	wipe purge nuke trash scrap discard register raise draft compose cut grab
	kick boot expel evict ban blacklist tweak bump toggle flip adjust amend upvote
	squash abandon share react generate`

// readConcept is the soft concept of a query without a verb.
var readConcept = concept{soft: true, variants: []variant{{Stem("list"), 0.4}, {Stem("get"), 0.3}}}

// removeConcept is the soft concept of a word that begins with "un".
var removeConcept = concept{soft: true, variants: []variant{{Stem("remove"), 0.6}, {Stem("delete"), 0.5}}}

// concept is one word of a query with every term that stands for it; the
// first variant is the word's own stem. A soft concept adds to a
// document's score, and to the share of its name the query covers, but
// not to the share of the query it matches.
type concept struct {
	word     string
	variants []variant
	soft     bool
	// verb marks the word that says what the query asks to do (see
	// parseQuery and leadVerb).
	verb bool
}

// parseQuery turns a query into its concepts, in order: one per word that
// is not a stop word (an abbreviation gives one per word it stands for).
// A word that appears twice counts once.
func parseQuery(q string) []concept {
	var out []concept
	seen := map[string]bool{}
	addConcept := func(word, stem string) bool {
		if seen[stem] {
			return false
		}
		seen[stem] = true
		for _, c := range out {
			for _, v := range c.variants {
				if v.term == stem {
					return false // a synonym of an earlier word ("create a new …")
				}
			}
		}
		c := concept{word: word, variants: []variant{{stem, 1}}}
		c.variants = append(c.variants, synonyms[stem]...)
		if stem != word {
			c.variants = append(c.variants, synonyms[word]...)
		}
		out = append(out, c)
		return true
	}
	// A request may state its situation first and its verb after a comma:
	// "CI flaked, rerun the failed jobs". The verb is the first clause's
	// leading word, or else the leading verb of a later clause.
	var ws []string
	var starts []int
	for _, cl := range strings.FieldsFunc(q, func(r rune) bool { return strings.ContainsRune(",;:()", r) }) {
		starts = append(starts, len(ws))
		ws = append(ws, joinPhrasal(joinPrefixes(Words(cl)))...)
	}
	lead := leadWord(ws)
	isVerb := func(w string) bool { return verbs[Stem(w)] && !plural(w) }
	if lead < len(ws) && !isVerb(ws[lead]) && !isQuestion(ws) {
		for _, st := range starts[1:] {
			if l := st + leadWord(ws[st:]); l < len(ws) && isVerb(ws[l]) {
				lead = l
				break
			}
		}
	}
	nounVerb := false
	for i, w := range ws {
		if full, ok := abbreviations[w]; ok {
			for _, s := range full {
				addConcept(s, s)
			}
			continue
		}
		if stopWords[w] && directed[w] == nil {
			continue
		}
		if i < lead && isFiller(ws, i) {
			continue // a filler before the verb ("manually trigger …")
		}
		if !addConcept(w, Stem(w)) || i != lead {
			continue
		}
		switch {
		case isVerb(w):
			out[len(out)-1].verb = true
		case nounVerbs[Stem(w)] && !plural(w) && verbContext(ws[i+1:]):
			out[len(out)-1].verb = true
			nounVerb = true
		}
	}
	if len(out) == 0 {
		return nil
	}
	if nounVerb {
		// "comment on an issue", "tag issue 17": a noun used as a verb asks to
		// add one.
		return append(out, createConcept)
	}
	if leadVerb(out) >= 0 {
		return out
	}
	return append(out, readConcept)
}

// leadWord is the index in ws of the word that may say what the query asks
// to do: the first, after adverbs and fillers ("manually", "just").
func leadWord(ws []string) int {
	for i, w := range ws {
		if !isFiller(ws, i) && !stopWords[w] && directed[w] == nil && abbreviations[w] == nil {
			return i
		}
	}
	return len(ws)
}

// isQuestion reports whether ws ask to know something: they begin with a
// question word ("which", "is"), but not "how to" or "how do I".
func isQuestion(ws []string) bool {
	for i, w := range ws {
		if isFiller(ws, i) {
			continue
		}
		return questionWords[w] && !(w == "how" && i+1 < len(ws) && howTo[ws[i+1]])
	}
	return false
}

// isFiller reports whether ws[i] is a word a request may put before its
// verb: a word such as "just", or an adverb in -ly before a verb
// ("manually trigger"; but "reply", and "weekly commit activity").
func isFiller(ws []string, i int) bool {
	w := ws[i]
	if fillers[w] {
		return true
	}
	return len(w) > 4 && strings.HasSuffix(w, "ly") && !verbs[Stem(w)] && !nounVerbs[Stem(w)] &&
		i+1 < len(ws) && verbs[Stem(ws[i+1])]
}

// fillers are words a request may put before its verb.
var fillers = setOf(`just also now then quickly please pls kindly go ahead simply`)

// joinPrefixes joins a prefix written apart from its word ("re-run" gives
// rerun; "auto-generate" gives generate).
func joinPrefixes(ws []string) []string {
	out := ws[:0:0]
	for i := 0; i < len(ws); i++ {
		if i+1 < len(ws) {
			switch ws[i] {
			case "re", "un":
				out = append(out, ws[i]+ws[i+1])
				i++
				continue
			case "auto", "force", "bulk", "mass":
				continue
			}
		}
		out = append(out, ws[i])
	}
	return out
}

// nounVerbs are nouns that a request also uses as its verb, meaning "add
// one": "comment on an issue", "label issue 17", "file a bug". They count
// as the query's verb only where they lead it, in their base form, and
// before what a verb acts on (see verbContext): "comment history" and
// "comments on an issue" stay nouns.
var nounVerbs = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`comment reply label tag file commit star pin review note bookmark
		message post flag`) {
		nounVerbs[Stem(w)] = true
	}
}

// verbContext reports whether the words after a noun that may be a verb
// make it one: an article, a pronoun, a preposition or a number follows
// it ("comment on an issue", "file a bug", "star it"), or a number
// follows the next word ("label issue 17").
func verbContext(next []string) bool {
	isNum := func(w string) bool { return w != "" && strings.Trim(w, "0123456789") == "" }
	switch {
	case len(next) == 0:
		return false
	case objectStarts[next[0]] || isNum(next[0]):
		return true
	case len(next) > 1 && isNum(next[1]):
		return true
	}
	return false
}

// objectStarts are words that begin what a verb acts on.
var objectStarts = setOf(`a an the this that these those my our your their his her its it them me us
	on to in onto at with for about`)

// plural reports whether w looks like a plural noun (a verb that leads a
// request is in its base form: "comment on", not "comments on").
func plural(w string) bool {
	return strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && Stem(w) != w
}

// createConcept is the soft concept of a noun used as a verb.
var createConcept = concept{soft: true, variants: []variant{{Stem("create"), 0.5}, {Stem("add"), 0.4}}}

// leadVerb returns the index of the concept that says what the query asks
// to do, or -1: the one parseQuery marked, the request's leading word
// (after fillers, stop words and "my") when that is a verb in its base
// form or a noun used as one, or else the verb leading a later clause.
// Plain-language requests put the verb first ("merge a pull request"); a
// verb later on is more often a noun ("jobs of a workflow run").
func leadVerb(cs []concept) int {
	for i, c := range cs {
		if c.verb {
			return i
		}
	}
	return -1
}

// moodMismatch scales the score of a method whose effect is not the one
// the query asks for: a question ("which checks failed?") wants a method
// that reads; a request to change something wants one that writes, but
// less surely ("add two numbers" asks for a method that only reads), so
// a read-only method gives way only a little to it.
var moodMismatch = [...]float64{Reads: 0.4, Writes: 0.85}

// questionWords begin a query that asks to know something.
var questionWords = setOf(`what which who whom whose where when why how is are was were did does has have any`)

// howTo are the words after "how" that make it a request to do something
// ("how do I merge …", "how to merge …").
var howTo = setOf(`do can to should would could`)

// readVerbs are lead verbs that ask to read.
var readVerbs = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`get read fetch retrieve show view see inspect list enumerate browse search find query lookup locate download compare check count tell display`) {
		readVerbs[Stem(w)] = true
	}
}

// queryMood is what a query asks for: Reads for a question or a lead verb
// that reads, Writes for another lead verb, Unknown otherwise.
func queryMood(q string, cs []concept) Effect {
	if isQuestion(Words(q)) {
		return Reads
	}
	if i := leadVerb(cs); i >= 0 {
		if readVerbs[cs[i].variants[0].term] {
			return Reads
		}
		return Writes
	}
	if strings.HasSuffix(strings.TrimSpace(q), "?") {
		return Reads
	}
	return Unknown
}
