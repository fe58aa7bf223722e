package notes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The argument parsers check what the input schemas say, so a call that
// bypassed schema validation still gets an error naming the field.

type listArgs struct {
	Tag   *string
	Limit int
}

func (a *listArgs) parse(raw json.RawMessage) error {
	fields, err := object(raw, "tag", "limit")
	if err != nil {
		return err
	}
	if v, ok := fields["tag"]; ok {
		s, err := str(v, "tag", 0)
		if err != nil {
			return err
		}
		a.Tag = &s
	}
	a.Limit = defaultLimit
	if v, ok := fields["limit"]; ok {
		if a.Limit, err = integer(v, "limit", 1, maxLimit); err != nil {
			return err
		}
	}
	return nil
}

// createArgs are createNote's arguments, which are also the value of the
// note's record.
type createArgs struct {
	Text string   `json:"text"`
	Tags []string `json:"tags"` // never nil once parsed; duplicates removed, order kept
}

func (a *createArgs) parse(raw json.RawMessage) error {
	fields, err := object(raw, "text", "tags")
	if err != nil {
		return err
	}
	v, ok := fields["text"]
	if !ok {
		return errors.New(`"text" is required`)
	}
	if a.Text, err = str(v, "text", 1); err != nil {
		return err
	}
	a.Tags = []string{}
	if v, ok := fields["tags"]; ok {
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil || isNull(v) {
			return fmt.Errorf(`"tags" must be an array of strings, got %s`, kind(v))
		}
		for i, item := range items {
			t, err := str(item, fmt.Sprintf("tags[%d]", i), 1)
			if err != nil {
				return err
			}
			if !slices.Contains(a.Tags, t) {
				a.Tags = append(a.Tags, t)
			}
		}
	}
	return nil
}

type deleteArgs struct {
	ID string
}

func (a *deleteArgs) parse(raw json.RawMessage) error {
	fields, err := object(raw, "id")
	if err != nil {
		return err
	}
	v, ok := fields["id"]
	if !ok {
		return errors.New(`"id" is required`)
	}
	a.ID, err = str(v, "id", 1)
	return err
}

// object decodes the argument object; empty or null arguments are {}.
// Properties other than allowed are refused.
func object(raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) {
		return map[string]json.RawMessage{}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("arguments must be an object, got %s", kind(raw))
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown) // for determinism
		return nil, fmt.Errorf("unknown argument %s (allowed: %s)", strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	return fields, nil
}

// str decodes a string field of at least minLen characters.
func str(v json.RawMessage, field string, minLen int) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil || isNull(v) {
		return "", fmt.Errorf("%q must be a string, got %s", field, kind(v))
	}
	if len([]rune(s)) < minLen {
		return "", fmt.Errorf("%q must not be empty", field)
	}
	return s, nil
}

// integer decodes a whole number in [lo, hi] (1.0 counts as 1, as in JSON
// Schema).
func integer(v json.RawMessage, field string, lo, hi int) (int, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || isNull(v) || f != math.Trunc(f) {
		return 0, fmt.Errorf("%q must be an integer, got %s", field, kind(v))
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, fmt.Errorf("%q must be between %d and %d, got %s", field, lo, hi, v)
	}
	return int(f), nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// kind names the JSON type of v for error messages.
func kind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if json.Valid(v) {
		if f, err := json.Number(v).Float64(); err == nil && f != math.Trunc(f) {
			return "a number (" + string(v) + ")"
		}
		return "a number"
	}
	return "invalid JSON"
}
