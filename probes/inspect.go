package probes

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

const (
	// maxInspectBytes bounds the body copy kept for InspectJSON, whatever
	// MaxBytes says.
	maxInspectBytes = 16 << 20
	// maxJSONDepth stops the key walk on absurd nesting (the raw diff scan
	// still runs).
	maxJSONDepth = 512
	// maxJSONPaths bounds the distinct paths collected before the
	// MaxJSONKeys shallowest are kept.
	maxJSONPaths = 8192
)

// jsonInspection is what inspectJSON found in a body.
type jsonInspection struct {
	Keys     []string
	DiffLike bool
	Valid    bool // the body is one complete JSON value
	Partial  bool // the walk stopped early (malformed, truncated, too deep)
	Dropped  int  // distinct key paths not kept (over MaxJSONKeys)
}

// jsonFrame is one open object or array of the walk.
type jsonFrame struct {
	object    bool
	expectKey bool   // object: the next string is a key
	path      string // the path of this container ("a", "a[]")
	key       string // object: the path of the current member
}

// inspectJSON walks body as a stream of JSON tokens, collecting the object
// keys as dotted paths and looking for a unified-diff header in the raw
// bytes and in every string. It reads only body and never panics; a
// truncated or malformed body yields what was seen up to that point.
func inspectJSON(body []byte) jsonInspection {
	var res jsonInspection
	res.DiffLike = hasDiffHeader(body)
	paths := make(map[string]int) // path -> depth
	note := func(p string, depth int) {
		if _, ok := paths[p]; ok {
			return
		}
		if len(paths) >= maxJSONPaths {
			res.Dropped++
			return
		}
		paths[p] = depth
	}

	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []jsonFrame
	// valuePath is the path of a value at the current position.
	valuePath := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			return top.key
		}
		return top.path
	}
	// afterValue marks the end of a member value in the enclosing object.
	afterValue := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].expectKey = true
		}
	}
	done := false
	for !done {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) && len(stack) == 0 && res.Valid {
				break // a complete value and nothing after it
			}
			res.Valid = false
			res.Partial = true
			// the last string may be cut: scan the rest loosely
			if !res.DiffLike {
				res.DiffLike = hasDiffHeader(looseTail(body[min(int(dec.InputOffset()), len(body)):]))
			}
			break
		}
		if res.Valid {
			// a second value after a complete one: not one JSON document
			res.Valid = false
			res.Partial = true
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if len(stack) >= maxJSONDepth {
					res.Partial = true
					if !res.DiffLike {
						res.DiffLike = hasDiffHeader(looseTail(body[min(int(dec.InputOffset()), len(body)):]))
					}
					done = true
					continue
				}
				p := valuePath()
				if v == '[' {
					p = joinPath(p, "[]")
				}
				stack = append(stack, jsonFrame{object: v == '{', expectKey: v == '{', path: p})
			case '}', ']':
				stack = stack[:len(stack)-1]
				afterValue()
			}
		case string:
			if !res.DiffLike && hasDiffHeader([]byte(v)) {
				res.DiffLike = true
			}
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				top := &stack[n-1]
				top.key = joinPath(top.path, cleanKey(v))
				top.expectKey = false
				note(top.key, n)
				continue
			}
			afterValue()
		default:
			afterValue()
		}
		if len(stack) == 0 {
			res.Valid = true
		}
	}
	res.Keys, res.Dropped = pickKeys(paths, res.Dropped)
	return res
}

// joinPath appends a member name (or "[]") to a container path, keeping
// the result at most MaxJSONKeyBytes long (cut on a rune boundary); a
// path already at the bound stays as it is.
func joinPath(parent, name string) string {
	var p string
	switch {
	case name == "[]":
		p = parent + name
	case parent == "":
		p = name
	default:
		p = parent + "." + name
	}
	if len(p) <= MaxJSONKeyBytes {
		return p
	}
	cut := MaxJSONKeyBytes
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut]
}

// cleanKey replaces control characters in a key, which would garble
// whoever renders it, and keeps at most MaxJSONKeyBytes of it (the path is
// cut again by joinPath).
func cleanKey(k string) string {
	if len(k) > MaxJSONKeyBytes+utf8.UTFMax {
		k = k[:MaxJSONKeyBytes+utf8.UTFMax]
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, k)
}

// pickKeys keeps the MaxJSONKeys shallowest paths (then in lexical order),
// sorted; it returns them and the count of paths dropped.
func pickKeys(paths map[string]int, dropped int) ([]string, int) {
	if len(paths) == 0 {
		return nil, dropped
	}
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	if len(keys) > MaxJSONKeys {
		sort.Slice(keys, func(i, j int) bool {
			di, dj := paths[keys[i]], paths[keys[j]]
			if di != dj {
				return di < dj
			}
			return keys[i] < keys[j]
		})
		dropped += len(keys) - MaxJSONKeys
		keys = keys[:MaxJSONKeys]
	}
	sort.Strings(keys)
	return keys, dropped
}

// hasDiffHeader reports whether a line of b starts a unified diff: "diff
// --git ", "@@ -", or a "--- " line directly followed by a "+++ " line.
func hasDiffHeader(b []byte) bool {
	prevMinus := false
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case bytes.HasPrefix(line, []byte("diff --git ")), bytes.HasPrefix(line, []byte("@@ -")):
			return true
		case prevMinus && bytes.HasPrefix(line, []byte("+++ ")):
			return true
		}
		prevMinus = bytes.HasPrefix(line, []byte("--- "))
	}
	return false
}

// looseTail turns what follows the last complete JSON token into text a
// diff header can be found in: separators and an opening quote are
// dropped, and the common escapes are undone without requiring the string
// to be complete (a truncated body ends inside one).
func looseTail(b []byte) []byte {
	b = bytes.TrimLeft(b, " \t\r\n,:")
	b = bytes.TrimPrefix(b, []byte(`"`))
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 == len(b) {
			out = append(out, c)
			continue
		}
		i++
		switch b[i] {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // \" \\ \/ and anything else: the character itself
			out = append(out, b[i])
		}
	}
	return out
}
