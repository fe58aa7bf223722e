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
// They are general vocabulary of APIs (verbs of create, update, delete,
// stop and find, and what people say for them), never words of one
// particular API. Each group is measured with and without on the query
// sets the search was not tuned on (BENCHMARKS.md, "Search that
// generalises"): kept where it puts more intended methods in the first 5
// or 20 there, or, changing nothing there, holds a tuned set at its
// earlier recall; groups that did neither were deleted.
var synonymGroups = []struct {
	weight float64
	words  string
}{
	{0.7, "create add new open make post insert"},
	{0.6, "create write save store put"},
	{0.5, "update write save store put"},
	{0.8, "delete remove drop destroy erase"},
	{0.7, "stop cancel abort halt terminate kill"},
	{0.7, "search find query lookup locate"},
	{0.7, "sum add plus total"},
	{0.6, "upload attach"},
	{0.7, "move transfer relocate"},
	{0.5, "add grant give"},
	{0.5, "create file register raise draft compose cut"},
	{0.5, "label tag"},
	{0.6, "redeliver resend retry"},
	{0.6, "block ban bar blacklist"},
	{0.7, "issue ticket bug"},
	{0.5, "update tweak bump toggle flip adjust amend"},
}

// selfWords are how a query names the authenticated user: each finds
// "authenticated" at selfWeight, one way only ("authenticated" does not
// mean "my").
var selfWords = setOf(`my me mine myself i current self`)

const selfWeight = 0.6

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
	for w := range selfWords {
		add(w, Stem("authenticated"), selfWeight)
	}
}

// verbs are the stems of verbWords: words that say what to do. A query
// without one ("dependabot alerts", "reviews on a pull request") asks to
// read: it gets a soft concept that favours list and get methods without
// counting as a word of the query.
var verbs = stemSet(verbWords)

// verbWords are the verbs a request to an API leads with, in any API:
// what to do to a thing, not the thing. Whether a synonym group holds
// verbs does not matter here: this list alone says what a verb is.
const verbWords = `abandon abort accept add adjust amend approve archive ask assign attach
	ban blacklist block boot browse bump cancel change check clone close compare compose copy
	create cut delete destroy disable discard dismiss dispatch download draft drop duplicate
	edit enable enumerate erase evict execute expel fetch find fire flip follow fork generate
	get give grab grant halt insert inspect install invite invoke kick kill launch list locate
	lock lookup make mark merge modify move nuke open patch ping post protect publish purge put
	query raise react read redeliver register reject relocate remove rename render reopen
	replace request rerun resend reset resolve restore retrieve retry revert review revoke run
	save scrap search see send set share show squash star start stop store submit subscribe
	suspend sync terminate test toggle transfer trash trigger tweak unarchive unassign unblock
	unfollow uninstall unlock unstar unsubscribe unsuspend unwatch update upload upvote view
	watch wipe write`

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

// joinPhrasal replaces each phrasal verb of words with the verb it means,
// followed by the words between its two: what it acts on may stand
// between them ("turn it off", "kick a user out"), up to
// maxPhrasalGap words of which none is a verb.
func joinPhrasal(words []string) []string {
	out := words[:0:0]
next:
	for i := 0; i < len(words); i++ {
		for gap := 0; gap <= maxPhrasalGap && i+gap+1 < len(words); gap++ {
			if gap > 0 && verbs[Stem(words[i+gap])] {
				break
			}
			if v, ok := phrasalVerbs[[2]string{words[i], words[i+gap+1]}]; ok {
				out = append(out, v)
				out = append(out, words[i+1:i+gap+1]...)
				i += gap + 1
				continue next
			}
		}
		out = append(out, words[i])
	}
	return out
}

// maxPhrasalGap is how many words may stand between the two of a phrasal
// verb.
const maxPhrasalGap = 3

// readConcept is the soft concept of a query without a verb.
var readConcept = concept{soft: true, variants: []variant{{Stem("list"), 0.4}, {Stem("get"), 0.3}}}

// concept is one word of a query with every term that stands for it; the
// first variant is the word's own stem. A soft concept adds to a
// document's score, and to the share of its name the query covers, but
// not to the share of the query it matches.
type concept struct {
	word     string
	variants []variant
	soft     bool
}

// query is a parsed query: its concepts, in order; the index of the one
// that says what it asks to do, or -1; and what it asks for (see mood).
type query struct {
	concepts []concept
	verb     int
	mood     Effect
}

// parseQuery turns a query into its concepts, in order: one per word that
// is not a stop word (an abbreviation gives one per word it stands for).
// A word that appears twice counts once, and so does a synonym of an
// earlier word ("create a new …").
//
// The verb is the request's leading word (after stop words and "my") when
// that is a verb in its base form or a noun used as one, or else the verb
// leading a later clause: plain-language requests put the verb first
// ("merge a pull request"); a verb later on is more often a noun ("jobs of
// a workflow run"). known reports whether the index holds a term (nil:
// every term): a leading word it does not hold, before what a verb acts
// on, is a verb this package does not know ("slap a label on #88",
// "promote jane to owner"), as a request leads with its verb.
func parseQuery(q string, known func(term string) bool) query {
	var out []concept
	addConcept := func(word, stem string) bool {
		for _, c := range out {
			for _, v := range c.variants {
				if v.term == stem {
					return false
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
		ws = append(ws, joinPhrasal(Words(cl))...)
	}
	question := isQuestion(ws)
	lead := leadWord(ws)
	isVerb := func(w string) bool { return verbs[Stem(w)] && !plural(w) }
	if lead < len(ws) && !isVerb(ws[lead]) && !question {
		for _, st := range starts[1:] {
			if l := st + leadWord(ws[st:]); l < len(ws) && isVerb(ws[l]) {
				lead = l
				break
			}
		}
	}
	verb, nounVerb := -1, false
	for i, w := range ws {
		if full, ok := abbreviations[w]; ok {
			for _, s := range full {
				addConcept(s, s)
			}
			continue
		}
		if stopWords[w] || !addConcept(w, Stem(w)) || i != lead {
			continue
		}
		switch {
		case isVerb(w):
			verb = len(out) - 1
		case nounVerbs[Stem(w)] && !plural(w) && verbContext(ws[i+1:]):
			verb, nounVerb = len(out)-1, true
		case known != nil && !known(Stem(w)) && !plural(w) && verbContext(ws[i+1:]) && !question:
			verb = len(out) - 1
		}
	}
	switch {
	case len(out) == 0:
		return query{verb: -1}
	case nounVerb:
		// "comment on an issue", "tag issue 17": a noun used as a verb asks to
		// add one.
		out = append(out, createConcept)
	case verb < 0:
		out = append(out, readConcept)
	}
	return query{concepts: out, verb: verb, mood: mood(q, question, out, verb)}
}

// leadWord is the index in ws of the word that may say what the query asks
// to do: the first that is not a stop word, "my" or an abbreviation.
func leadWord(ws []string) int {
	for i, w := range ws {
		if !stopWords[w] && !selfWords[w] && abbreviations[w] == nil {
			return i
		}
	}
	return len(ws)
}

// isQuestion reports whether ws ask to know something: they begin with a
// question word ("which", "is"), but not "how to" or "how do I".
func isQuestion(ws []string) bool {
	return len(ws) > 0 && questionWords[ws[0]] && !(ws[0] == "how" && len(ws) > 1 && howTo[ws[1]])
}

// nounVerbs are nouns that a request also uses as its verb, meaning "add
// one": "comment on an issue", "label issue 17", "file a bug". They count
// as the query's verb only where they lead it, in their base form, and
// before what a verb acts on (see verbContext): "comment history" and
// "comments on an issue" stay nouns.
var nounVerbs = stemSet(`comment reply label tag file commit star pin review note bookmark
	message post flag`)

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

// moodMismatch scales the score of a method whose effect is not the one
// the query asks for: a question ("which checks failed?") wants a method
// that reads; a request to change something wants one that writes, but
// less surely ("add two numbers" asks for a method that only reads), so
// a read-only method gives way to it less.
var moodMismatch = [...]float64{Reads: 0.4, Writes: 0.7}

// questionWords begin a query that asks to know something.
var questionWords = setOf(`what which who whom whose where when why how is are was were did does has have any`)

// howTo are the words after "how" that make it a request to do something
// ("how do I merge …", "how to merge …").
var howTo = setOf(`do can to should would could`)

// readVerbs are lead verbs that ask to read.
var readVerbs = stemSet(`get read fetch retrieve show view see inspect list enumerate browse search find query lookup locate download compare check count tell display`)

// mood is what a query asks for: Reads for a question or a lead verb that
// reads, Writes for another lead verb, Unknown otherwise.
func mood(q string, question bool, cs []concept, verb int) Effect {
	switch {
	case question:
		return Reads
	case verb >= 0 && readVerbs[cs[verb].variants[0].term]:
		return Reads
	case verb >= 0:
		return Writes
	case strings.HasSuffix(strings.TrimSpace(q), "?"):
		return Reads
	}
	return Unknown
}
