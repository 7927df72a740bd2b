package kubernetes

import (
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fromYAML reads one object written in YAML, converted as load converts.
func fromYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(s, "\t", "  ")), &n); err != nil {
		t.Fatalf("test YAML: %v", err)
	}
	budget := maxAliasNodes
	c := converter{in: input{name: "test.yaml"}, budget: &budget, active: map[*yaml.Node]bool{}}
	v, err := c.value(&n, 0)
	if err != nil {
		t.Fatalf("test YAML: %v", err)
	}
	return &unstructured.Unstructured{Object: v.(map[string]any)}
}

func TestAssess(t *testing.T) {
	tests := []struct {
		name   string
		obj    string
		asHook bool
		want   health
		msg    string // a substring of the message
	}{
		// Deployment
		{name: "deployment ready", obj: deployment(3, "observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3"), want: healthReady, msg: "3/3 ready"},
		{name: "deployment generation not observed", obj: deployment(3, "observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3"), want: healthProgressing, msg: "observe generation 2"},
		{name: "deployment without status", obj: deployment(3, ""), want: healthProgressing, msg: "observe generation 2"},
		{name: "deployment updating", obj: deployment(3, "observedGeneration: 2, replicas: 4, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 3"), want: healthProgressing, msg: "1/3 updated"},
		{name: "deployment old replicas left", obj: deployment(3, "observedGeneration: 2, replicas: 4, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3"), want: healthProgressing, msg: "old ones terminating"},
		{name: "deployment not ready", obj: deployment(3, "observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2"), want: healthProgressing, msg: "2/3 ready"},
		{name: "deployment not available", obj: deployment(3, "observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 1"), want: healthProgressing, msg: "1/3 available"},
		{name: "deployment default one replica", obj: deployment(-1, "observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1"), want: healthReady, msg: "1/1 ready"},
		{name: "deployment default one replica, none yet", obj: deployment(-1, "observedGeneration: 2"), want: healthProgressing, msg: "0/1 updated"},
		{name: "deployment zero replicas", obj: deployment(0, "observedGeneration: 2"), want: healthReady, msg: "0/0"},
		{name: "deployment scaled to zero, pods left", obj: deployment(0, "observedGeneration: 2, replicas: 2"), want: healthProgressing, msg: "2 replicas, 0 wanted"},
		{
			name: "deployment progress deadline exceeded",
			obj: deployment(3, `observedGeneration: 2, replicas: 3, updatedReplicas: 1,
		conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: 'ReplicaSet "web-1" has timed out progressing.'}]`),
			want: healthFailed, msg: `progress deadline exceeded: ReplicaSet "web-1" has timed out progressing.`,
		},
		{
			name: "deployment progressing condition is fine",
			obj: deployment(1, `observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1,
		conditions: [{type: Progressing, status: "True", reason: NewReplicaSetAvailable}]`),
			want: healthReady,
		},
		// StatefulSet
		{name: "statefulset ready", obj: statefulSet(3, "", "observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 3, currentRevision: r2, updateRevision: r2"), want: healthReady, msg: "3/3 ready"},
		{name: "statefulset generation not observed", obj: statefulSet(3, "", "observedGeneration: 1, replicas: 3, readyReplicas: 3, currentRevision: r2, updateRevision: r2"), want: healthProgressing, msg: "observe generation"},
		{name: "statefulset not ready", obj: statefulSet(3, "", "observedGeneration: 2, replicas: 3, readyReplicas: 2, currentRevision: r2, updateRevision: r2"), want: healthProgressing, msg: "2/3 ready"},
		{name: "statefulset rolling", obj: statefulSet(3, "", "observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 1, currentRevision: r1, updateRevision: r2"), want: healthProgressing, msg: "1/3 updated"},
		{name: "statefulset partition reached", obj: statefulSet(3, "{type: RollingUpdate, rollingUpdate: {partition: 2}}", "observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 1, currentRevision: r1, updateRevision: r2"), want: healthReady},
		{name: "statefulset partition not reached", obj: statefulSet(3, "{type: RollingUpdate, rollingUpdate: {partition: 1}}", "observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 1, currentRevision: r1, updateRevision: r2"), want: healthProgressing, msg: "1/2 updated (partition 1)"},
		{name: "statefulset partition above replicas", obj: statefulSet(2, "{type: RollingUpdate, rollingUpdate: {partition: 5}}", "observedGeneration: 2, replicas: 2, readyReplicas: 2, currentRevision: r1, updateRevision: r2"), want: healthReady},
		{name: "statefulset OnDelete counts ready only", obj: statefulSet(2, "{type: OnDelete}", "observedGeneration: 2, replicas: 2, readyReplicas: 2, currentRevision: r1, updateRevision: r2"), want: healthReady},
		{name: "statefulset OnDelete not ready", obj: statefulSet(2, "{type: OnDelete}", "observedGeneration: 2, replicas: 2, readyReplicas: 1"), want: healthProgressing, msg: "1/2 ready"},
		{name: "statefulset zero replicas", obj: statefulSet(0, "", "observedGeneration: 2, currentRevision: r1, updateRevision: r2"), want: healthReady, msg: "0/0"},
		{name: "statefulset zero replicas, pods left", obj: statefulSet(0, "", "observedGeneration: 2, replicas: 1"), want: healthProgressing, msg: "1 replicas, 0 wanted"},
		// DaemonSet
		{name: "daemonset ready", obj: daemonSet("", "observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3, numberReady: 3"), want: healthReady, msg: "3/3 available"},
		{name: "daemonset generation not observed", obj: daemonSet("", "observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3"), want: healthProgressing, msg: "observe generation"},
		{name: "daemonset updating", obj: daemonSet("", "observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3"), want: healthProgressing, msg: "2/3 updated"},
		{name: "daemonset not available", obj: daemonSet("", "observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2"), want: healthProgressing, msg: "2/3 available"},
		{name: "daemonset OnDelete ignores updates", obj: daemonSet("{type: OnDelete}", "observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 0, numberAvailable: 3"), want: healthReady},
		{name: "daemonset on no node", obj: daemonSet("", "observedGeneration: 2, desiredNumberScheduled: 0"), want: healthReady, msg: "0/0"},
		// ReplicaSet, ReplicationController
		{name: "replicaset ready", obj: "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, generation: 1}\nspec: {replicas: 2}\nstatus: {observedGeneration: 1, replicas: 2, readyReplicas: 2}", want: healthReady, msg: "2/2 ready"},
		{name: "replicaset not ready", obj: "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, generation: 1}\nspec: {replicas: 2}\nstatus: {observedGeneration: 1, replicas: 2, readyReplicas: 1}", want: healthProgressing, msg: "1/2 ready"},
		{name: "replicaset not observed", obj: "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, generation: 2}\nspec: {replicas: 2}\nstatus: {observedGeneration: 1, readyReplicas: 2}", want: healthProgressing, msg: "observe"},
		{name: "replicationcontroller default one", obj: "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: r}\nstatus: {readyReplicas: 1}", want: healthReady, msg: "1/1 ready"},
		{name: "replicationcontroller not ready", obj: "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: r}\nspec: {replicas: 3}\nstatus: {readyReplicas: 1}", want: healthProgressing, msg: "1/3 ready"},
		// Job
		{name: "job complete", obj: job("{conditions: [{type: Complete, status: 'True'}], succeeded: 1}"), want: healthReady, msg: "complete"},
		{name: "job complete as hook", obj: job("{conditions: [{type: Complete, status: 'True'}]}"), asHook: true, want: healthReady},
		{name: "job running is not ready", obj: job("{active: 1}"), want: healthProgressing, msg: "running: 1 active"},
		{name: "job running as hook", obj: job("{active: 1, failed: 2, succeeded: 1}"), asHook: true, want: healthProgressing, msg: "running: 1 active, 1 succeeded, 2 failed"},
		{name: "job without status", obj: job(""), want: healthProgressing, msg: "running: 0 active"},
		{name: "job failed", obj: job("{conditions: [{type: Failed, status: 'True', reason: BackoffLimitExceeded, message: Job has reached the specified backoff limit}]}"), want: healthFailed, msg: "failed: BackoffLimitExceeded: Job has reached the specified backoff limit"},
		{name: "job failed condition false", obj: job("{conditions: [{type: Failed, status: 'False'}], active: 1}"), want: healthProgressing},
		{name: "job suspended", obj: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {suspend: true}\nstatus: {}", want: healthProgressing, msg: "suspended"},
		// Pod
		{name: "pod ready", obj: pod("{phase: Running, conditions: [{type: Ready, status: 'True'}], containerStatuses: [{name: app, ready: true}]}"), want: healthReady},
		{name: "pod running, not ready", obj: pod("{phase: Running, conditions: [{type: Ready, status: 'False'}], containerStatuses: [{name: app, ready: false}]}"), want: healthProgressing, msg: "running: 0/1 containers ready"},
		{name: "pod ready is not enough for a hook", obj: pod("{phase: Running, conditions: [{type: Ready, status: 'True'}]}"), asHook: true, want: healthProgressing, msg: "running"},
		{name: "pod succeeded as hook", obj: pod("{phase: Succeeded}"), asHook: true, want: healthReady, msg: "succeeded"},
		{name: "pod succeeded is ready", obj: pod("{phase: Succeeded}"), want: healthReady},
		{name: "pod failed", obj: pod("{phase: Failed, reason: Evicted, message: The node was low on memory.}"), want: healthFailed, msg: "failed: Evicted: The node was low on memory."},
		{name: "pod failed as hook", obj: pod("{phase: Failed}"), asHook: true, want: healthFailed, msg: "failed"},
		{name: "pod crash loop", obj: pod("{phase: Running, containerStatuses: [{name: app, state: {waiting: {reason: CrashLoopBackOff, message: back-off 5m0s}}}]}"), want: healthFailed, msg: "container app: CrashLoopBackOff: back-off 5m0s"},
		{name: "pod image pull back-off", obj: pod("{phase: Pending, containerStatuses: [{name: app, state: {waiting: {reason: ImagePullBackOff}}}]}"), want: healthFailed, msg: "container app: ImagePullBackOff"},
		{name: "pod err image pull", obj: pod("{phase: Pending, containerStatuses: [{name: app, state: {waiting: {reason: ErrImagePull}}}]}"), want: healthFailed, msg: "ErrImagePull"},
		{name: "pod config error", obj: pod("{phase: Pending, containerStatuses: [{name: app, state: {waiting: {reason: CreateContainerConfigError, message: secret \"x\" not found}}}]}"), want: healthFailed, msg: "CreateContainerConfigError"},
		{name: "pod invalid image", obj: pod("{phase: Pending, containerStatuses: [{name: app, state: {waiting: {reason: InvalidImageName}}}]}"), want: healthFailed, msg: "InvalidImageName"},
		{name: "pod init container crash", obj: pod("{phase: Pending, initContainerStatuses: [{name: init, state: {waiting: {reason: CrashLoopBackOff}}}]}"), want: healthFailed, msg: "container init: CrashLoopBackOff"},
		{name: "pod container creating", obj: pod("{phase: Pending, containerStatuses: [{name: app, state: {waiting: {reason: ContainerCreating}}}]}"), want: healthProgressing, msg: "pending: 0/1 containers ready"},
		{name: "pod unschedulable", obj: pod("{phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable, message: 0/3 nodes are available}]}"), want: healthProgressing, msg: "not scheduled: Unschedulable: 0/3 nodes are available"},
		{name: "pod without status", obj: pod(""), want: healthProgressing, msg: "pending"},
		// PersistentVolumeClaim
		{name: "pvc bound", obj: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nstatus: {phase: Bound}", want: healthReady, msg: "bound"},
		{name: "pvc pending", obj: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nstatus: {phase: Pending}", want: healthProgressing, msg: "waiting to be bound"},
		{name: "pvc without status", obj: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}", want: healthProgressing},
		{name: "pvc lost", obj: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nstatus: {phase: Lost}", want: healthFailed, msg: "lost"},
		// Service
		{name: "service cluster IP", obj: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ClusterIP}", want: healthReady},
		{name: "service default type", obj: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {}", want: healthReady},
		{name: "service external name", obj: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ExternalName, externalName: example.org}", want: healthReady},
		{name: "service load balancer without ingress", obj: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {}}", want: healthProgressing, msg: "waiting for a load balancer"},
		{name: "service load balancer empty ingress", obj: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: []}}", want: healthProgressing, msg: "waiting for a load balancer"},
		{name: "service load balancer with IP", obj: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{ip: 203.0.113.7}]}}", want: healthReady, msg: "203.0.113.7"},
		{name: "service load balancer with hostname", obj: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{hostname: lb.example.org}]}}", want: healthReady, msg: "lb.example.org"},
		// CustomResourceDefinition
		{name: "crd established", obj: crd("[{type: NamesAccepted, status: 'True'}, {type: Established, status: 'True'}]"), want: healthReady, msg: "established"},
		{name: "crd not yet established", obj: crd("[{type: NamesAccepted, status: 'True'}, {type: Established, status: 'False'}]"), want: healthProgressing, msg: "waiting to be established"},
		{name: "crd without status", obj: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}", want: healthProgressing},
		{name: "crd names not accepted", obj: crd("[{type: NamesAccepted, status: 'False', reason: ListKindConflict, message: is already in use}]"), want: healthFailed, msg: "names not accepted: ListKindConflict: is already in use"},
		// Everything else
		{name: "configmap has no status", obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}", want: healthReady},
		{name: "custom resource without status", obj: "apiVersion: example.org/v1\nkind: CronTab\nmetadata: {name: c, generation: 3}", want: healthReady},
		{name: "custom resource ready", obj: "apiVersion: example.org/v1\nkind: CronTab\nmetadata: {name: c, generation: 3}\nstatus: {observedGeneration: 3, conditions: [{type: Ready, status: 'True'}]}", want: healthReady},
		{name: "custom resource reconciling", obj: "apiVersion: example.org/v1\nkind: CronTab\nmetadata: {name: c, generation: 3}\nstatus: {observedGeneration: 3, conditions: [{type: Reconciling, status: 'True', reason: Working, message: still working}]}", want: healthProgressing, msg: "still working"},
		{name: "custom resource stalled", obj: "apiVersion: example.org/v1\nkind: CronTab\nmetadata: {name: c, generation: 3}\nstatus: {observedGeneration: 3, conditions: [{type: Stalled, status: 'True', reason: Broken, message: cannot go on}]}", want: healthFailed, msg: "cannot go on"},
		{name: "custom resource generation not observed", obj: "apiVersion: example.org/v1\nkind: CronTab\nmetadata: {name: c, generation: 3}\nstatus: {observedGeneration: 2}", want: healthProgressing},
		{name: "a Deployment of another group is generic", obj: "apiVersion: example.org/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3}", want: healthReady},
		{name: "being deleted", obj: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, deletionTimestamp: '2026-01-01T00:00:00Z'}", want: healthProgressing, msg: "being deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, msg := assess(fromYAML(t, tt.obj), tt.asHook)
			if h != tt.want {
				t.Errorf("assess = %v (%q), want %v", h, msg, tt.want)
			}
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q does not contain %q", msg, tt.msg)
			}
			if msg == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestHealthString(t *testing.T) {
	for h, want := range map[health]string{healthProgressing: "progressing", healthReady: "ready", healthFailed: "failed"} {
		if h.String() != want {
			t.Errorf("%d.String() = %q, want %q", h, h.String(), want)
		}
	}
}

// deployment is a Deployment at generation 2 with replicas (-1: not
// given) and a status written as the inside of a flow mapping.
func deployment(replicas int, status string) string {
	spec := "{}"
	if replicas >= 0 {
		spec = "{replicas: " + strconv.Itoa(replicas) + "}"
	}
	s := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, generation: 2}\nspec: " + spec + "\n"
	if status != "" {
		s += "status: {" + status + "}\n"
	}
	return s
}

func statefulSet(replicas int, strategy, status string) string {
	spec := "{replicas: " + strconv.Itoa(replicas)
	if strategy != "" {
		spec += ", updateStrategy: " + strategy
	}
	return "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, generation: 2}\nspec: " + spec + "}\nstatus: {" + status + "}\n"
}

func daemonSet(strategy, status string) string {
	spec := "{}"
	if strategy != "" {
		spec = "{updateStrategy: " + strategy + "}"
	}
	return "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, generation: 2}\nspec: " + spec + "\nstatus: {" + status + "}\n"
}

func job(status string) string {
	s := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec: {}\n"
	if status != "" {
		s += "status: " + status + "\n"
	}
	return s
}

func pod(status string) string {
	s := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: app, image: app}]}\n"
	if status != "" {
		s += "status: " + status + "\n"
	}
	return s
}

func crd(conditions string) string {
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: crontabs.example.org}\nstatus: {conditions: " + conditions + "}\n"
}

// TestReadyOnApply: which objects an apply answered with need no tracking.
// A custom resource without a status (as it is created) is tracked, though
// it would assess as ready; one whose controller wrote a status is judged
// by it; a hook is judged as a hook.
func TestReadyOnApply(t *testing.T) {
	tests := []struct {
		name   string
		obj    string
		asHook bool
		want   bool
		said   string // "" for "ready" when ready
	}{
		{"config map", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}", false, true, ""},
		{"secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}", false, true, ""},
		{"role binding", "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: r}", false, true, ""},
		{"cluster IP service", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ClusterIP}\nstatus: {loadBalancer: {}}", false, true, ""},
		{"load balancer without address", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {}}", false, false, ""},
		{"new deployment", deployment(1, ""), false, false, ""},
		{"unchanged ready deployment", deployment(1, "observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1"), false, true, ""},
		{"custom resource as created", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, generation: 1}\nspec: {size: 1}", false, false, ""},
		{"custom resource current", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, generation: 1}\nstatus: {observedGeneration: 1, conditions: [{type: Ready, status: \"True\"}]}", false, true, ""},
		{"custom resource not ready", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, generation: 1}\nstatus: {observedGeneration: 1, conditions: [{type: Ready, status: \"False\", reason: Waiting}]}", false, false, ""},
		{"config map being deleted", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, deletionTimestamp: \"2026-11-29T00:00:00Z\"}", false, false, ""},
		{"running ready pod", pod("{phase: Running, conditions: [{type: Ready, status: \"True\"}]}"), false, true, ""},
		{"running ready pod as a hook (it must complete)", pod("{phase: Running, conditions: [{type: Ready, status: \"True\"}]}"), true, false, ""},
		{"completed pod as a hook", pod("{phase: Succeeded}"), true, true, ""},
		{"paused deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 1}\nspec: {paused: true}\nstatus: {}", false, true, readyPaused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, said := readyOnApply(fromYAML(t, tt.obj), tt.asHook)
			if got != tt.want {
				t.Errorf("readyOnApply = %v, want %v", got, tt.want)
			}
			want := tt.said
			if want == "" && tt.want {
				want = "ready"
			}
			if said != want {
				t.Errorf("readyOnApply says %q, want %q", said, want)
			}
		})
	}
}
