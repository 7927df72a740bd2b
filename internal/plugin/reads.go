package plugin

// OutsideReader is a plugin of lists whose instances read, when they run,
// files outside their component's folder that no stage planned reads: a
// terraform module's config dir or local modules (source = "../modules/vpc").
// The plan asks it for them so that the component's fingerprint covers
// them as it covers the folder's own files: a deploy of the component is
// not "unchanged" when one of them changed.
type OutsideReader interface {
	// ReadsOutside lists the files an instance of entry s of a component
	// whose folder is dir (absolute) reads outside that folder, each by its
	// path from the folder with symlinks resolved, slash-separated
	// ("../modules/vpc/main.tf"), sorted. What it cannot tell (a config
	// that does not parse, a folder named by a ${reference}) it leaves out:
	// the run reports what is wrong.
	ReadsOutside(dir string, s *Spec) []string
}

// ReadsOutsideOf is the built-in plugin named name when it is an
// OutsideReader.
func ReadsOutsideOf(name string) (OutsideReader, bool) { return registeredAs[OutsideReader](name) }

// EntryChecker is a plugin of lists that can tell, from an entry and the
// files of its component's folder, what a deploy of the instance would
// refuse when it runs (a terraform file that does not parse): the plan
// refuses it instead, before anything runs. It reports only what the run
// would refuse: a plan it fails would have failed the deploy. Files that
// may change before the instance runs — rendered by the component's
// templates (templated), written by a component before it — are not judged
// by what they hold at plan time.
type EntryChecker interface {
	// CheckEntry is the problems of entry s of a component whose folder is
	// dir (absolute), joined; nil when there are none.
	CheckEntry(dir string, s *Spec, templated bool) error
}

// EntryCheckerOf is the built-in plugin named name when it is an
// EntryChecker.
func EntryCheckerOf(name string) (EntryChecker, bool) { return registeredAs[EntryChecker](name) }

// registeredAs is the built-in plugin named name when it implements T.
func registeredAs[T any](name string) (T, bool) {
	var zero T
	r, ok := registry[name]
	if !ok {
		return zero, false
	}
	t, ok := r.p.(T)
	return t, ok
}
