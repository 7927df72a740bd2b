package elaborate

import "strings"

// mergeTuning merges the lifecycle.requires.optional entries of a derived
// stack with those of its base as the Hub CLI does (agilestacks/hub
// mergeRequiresTuning), to the letter. The entries are read newest first
// (the derived stack's from its last, then the base's from its last), each
// entry counted once, and an entry is kept unless a newer one overrides it:
//
//	req        optional for every component; dropped when a newer req:comp
//	           was kept, or a newer req: erased req
//	req:comp   optional for comp; dropped when a newer plain req was kept, or
//	           a newer req: erased req
//	:          erases everything older (and is not kept)
//	req:       erases the older entries of req (and is not kept)
//	:comp      meant to erase the older entries of comp, but the Hub compares
//	           the component with ":comp", colon included, so it erases
//	           nothing; it is not kept. gantry keeps that quirk, so that a
//	           stack elaborates as it does with the Hub.
//
// The kept entries are returned oldest first.
func mergeTuning(base, derived []string) []string {
	newestFirst := appendUnique(nil, reversed(derived)...)
	newestFirst = appendUnique(newestFirst, reversed(base)...)
	var kept, erasedReq, erasedComp []string
	for _, e := range newestFirst {
		req, comp, qualified := strings.Cut(e, ":")
		switch {
		case !qualified:
			if containsString(erasedReq, req) || hasPrefixed(kept, req+":") {
				continue
			}
		case req == "" && comp == "":
			return reversed(kept)
		case comp == "":
			erasedReq = append(erasedReq, req)
			continue
		case req == "":
			// The Hub records ":comp" here, colon included, and looks
			// for the bare component below: never found.
			erasedComp = append(erasedComp, ":"+comp)
			continue
		default:
			if containsString(erasedComp, comp) || containsString(erasedReq, req) || containsString(kept, req) {
				continue
			}
		}
		kept = append(kept, e)
	}
	return reversed(kept)
}

func reversed(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[len(list)-1-i] = s
	}
	return out
}

func hasPrefixed(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
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
