// Package kubernetes is gantry's kubernetes plugin: it deploys a component's
// Kubernetes manifests — plain files and folders, or a kustomize overlay — to
// a cluster with server-side apply, in the deploy stages of werf (seed 004):
// CustomResourceDefinitions first, then the pre-install or pre-upgrade hooks
// one at a time, then the main objects in werf.io/weight groups, each group
// created in a fixed kind order and tracked to readiness as a whole, then the
// post hooks, and last the pruning of objects that vanished from the
// manifests. An undeploy runs the same stages backwards.
//
// The plan shows every stage as a step of its own, so the stages are computed
// before anything runs, from the manifests as they are on disk: loading,
// expanding parameters, the stage order and the readiness rules are pure
// functions of their inputs (config.go, load.go, object.go, stages.go,
// ready.go); talking to the cluster is kept apart from them.
package kubernetes
