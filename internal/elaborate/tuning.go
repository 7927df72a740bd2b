package elaborate

import "strings"

// mergeTuning merges the lifecycle.requires.optional entries of a derived stack
// into those of its base, by the rules of seed 000:
//
//	req        supersedes all prior req:component (optional for everyone)
//	req:comp   supersedes a prior req (optional for that component only)
//	:          erases all prior tuning
//	req:       erases all prior tuning of req
//	:comp      erases all prior tuning of comp
//	otherwise  the entry is appended
func mergeTuning(base, derived []string) []string {
	out := append([]string(nil), base...)
	remove := func(drop func(req, comp string, qualified bool) bool) {
		kept := out[:0]
		for _, e := range out {
			req, comp, qualified := strings.Cut(e, ":")
			if !drop(req, comp, qualified) {
				kept = append(kept, e)
			}
		}
		out = kept
	}
	for _, e := range derived {
		req, comp, qualified := strings.Cut(e, ":")
		switch {
		case qualified && req == "" && comp == "":
			out = out[:0]
			continue
		case qualified && comp == "":
			remove(func(r, _ string, _ bool) bool { return r == req })
			continue
		case qualified && req == "":
			remove(func(_, c string, q bool) bool { return q && c == comp })
			continue
		case !qualified:
			remove(func(r, _ string, q bool) bool { return q && r == req })
		default:
			remove(func(r, _ string, q bool) bool { return !q && r == req })
		}
		if !containsString(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// appendUnique appends the items of add that list does not hold yet.
func appendUnique(list []string, add ...string) []string {
	for _, a := range add {
		if !containsString(list, a) {
			list = append(list, a)
		}
	}
	return list
}
