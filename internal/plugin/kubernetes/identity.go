package kubernetes

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// A cluster is told apart from another by the uid of its kube-system
// namespace: every cluster has one, made when the cluster was, and no
// other cluster shares it (the API server's address does not tell: two
// contexts may reach one cluster by two names, and a tunnel's
// 127.0.0.1:6443 is whichever cluster it leads to).
const identityNamespace = "kube-system"

// identity returns the cluster's id, "" when it cannot be read (a
// kubeconfig allowed to read no namespace): the instance is then not
// checked.
func (c *cluster) identity(ctx context.Context) (string, error) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	var m *metav1.PartialObjectMetadata
	err := c.ask(ctx, func() error {
		var err error
		m, err = c.meta.Resource(gvr).Get(ctx, identityNamespace, metav1.GetOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read namespace %s of %s, which tells one cluster from another: %s", identityNamespace, c.server, apiMessage(err))
	}
	return string(m.GetUID()), nil
}

// AcceptClusterEnv names the variable that accepts a cluster as an
// instance's when the state records another (sameCluster): its value is
// the uid of the cluster accepted, as the refusal says it, so that no
// blanket setting (in a CI job's environment) lets every context through.
const AcceptClusterEnv = "GANTRY_ACCEPT_CLUSTER"

// sameCluster refuses, before anything is applied or deleted, a run whose
// kubeconfig points at another cluster than the one the state records the
// instance's objects in: another environment's (a stack deployed to
// staging and production from one repository, each with its state, and a
// context left on the other). An undeploy is refused whatever that cluster
// holds: deleting nothing there, it would forget the objects where they
// are. A deploy is refused when that cluster holds objects of this stack
// the state records (it would overwrite them); when it holds none (a
// cluster made anew), the deploy goes on there and the state records that
// cluster. AcceptClusterEnv set to this cluster's uid accepts it.
func (r *release) sameCluster(ctx context.Context, rec *state.PluginInstance, env []string) error {
	id, err := r.cl.identity(ctx)
	if err != nil {
		return err
	}
	r.cluster = id
	if id == "" {
		// Not known here: what the state says stays.
		r.cluster = recordedCluster(rec)
		return nil
	}
	if rec == nil || rec.Cluster == "" || rec.Cluster == id || len(rec.Resources) == 0 {
		return nil
	}
	other := fmt.Sprintf("this instance was deployed to another cluster (kube-system namespace %s) than the kubeconfig's %s (kube-system namespace %s)", rec.Cluster, r.cl.server, id)
	if EnvValue(env, AcceptClusterEnv) == id {
		if r.action == plugin.ActionDelete {
			r.logf("%s, which %s=%s accepts as the instance's: the undeploy goes on here", other, AcceptClusterEnv, id)
		} else {
			r.logf("%s, which %s=%s accepts as the instance's: the deploy goes on here, and the state records this cluster", other, AcceptClusterEnv, id)
		}
		return nil
	}
	objs := make([]*object, len(rec.Resources))
	for i, res := range rec.Resources {
		objs[i] = recordedObject(res)
	}
	live, err := r.cl.lookup(ctx, objs)
	if err != nil {
		return err
	}
	var here []string
	for _, o := range objs {
		if m := live[o]; m != nil && ownerOf(m).stack == EnvValue(env, "HUB_STACK_NAME") {
			here = append(here, display(o.u)+inNamespace(o.u.GetNamespace()))
		}
	}
	accept := fmt.Sprintf("If this cluster is the instance's on purpose (made anew, restored from a backup), run again with %s=%s", AcceptClusterEnv, id)
	if len(here) == 0 {
		if r.action == plugin.ActionDelete {
			return fmt.Errorf("%s, which holds none of the objects the state records: is the kubeconfig's context the right one? Nothing was deleted, and the state keeps them. %s", other, accept)
		}
		r.logf("%s, which holds none of the objects the state records: the %s goes on here, and the state records this cluster", other, r.action)
		return nil
	}
	const most = 3
	more := ""
	if len(here) > most {
		more = fmt.Sprintf(" and %d more", len(here)-most)
		here = here[:most]
	}
	return fmt.Errorf("%s, which holds objects of this stack the state records: %s%s. They are another deployment's (this stack in another environment?): is the kubeconfig's context the right one? Nothing was applied or deleted. %s",
		other, strings.Join(here, ", "), more, accept)
}

// recordedCluster is the cluster a state records an instance's objects
// in, "" for none.
func recordedCluster(rec *state.PluginInstance) string {
	if rec == nil {
		return ""
	}
	return rec.Cluster
}

// inNamespace says " in namespace ns", nothing for a cluster-scoped
// object.
func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}
