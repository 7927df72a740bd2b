package build

// FolderResource is the resource (plan.Node.Takes) of a component folder,
// by its real path.
func FolderResource(realDir string) string { return "folder:" + realDir }

// sharedFoldersPass keeps components that render templates in a folder they
// share (one stack using a folder twice, or two names linked to one folder)
// from running at once: each one's verb step takes the folder and its end
// frees it, so the executor runs them one after the other in whatever order
// they become ready — their templates render next to themselves, and one
// must not run on the other's rendering. Components that render nothing
// share folders freely (a thousand components made from one folder run in
// parallel), and a folder used by one component takes nothing: runs of
// other stacks are kept apart by a lock on the folder (plan/steps), not by
// the plan.
func (b *builder) sharedFoldersPass() {
	users := map[string][]*compPlan{}
	var order []string
	for _, cp := range append(append([]*compPlan(nil), b.comps...), b.orphanPlans...) {
		if cp.info.Dir == "" || cp.c == nil || cp.c.Templates == nil || cp.info.Settled {
			continue
		}
		real := b.f.realDir(cp.info.Dir)
		if users[real] == nil {
			order = append(order, real)
		}
		users[real] = append(users[real], cp)
	}
	for _, real := range order {
		cps := users[real]
		if len(cps) < 2 {
			continue
		}
		res := FolderResource(real)
		for _, cp := range cps {
			verb := b.p.Node(cp.info.Name + "/" + cp.info.Verb)
			end := b.p.Node(cp.end)
			if verb == nil || end == nil {
				continue
			}
			verb.Takes = append(verb.Takes, res)
			end.Frees = append(end.Frees, res)
		}
	}
}
