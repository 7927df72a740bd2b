#!/usr/bin/env bash
# Starts a throwaway Kubernetes control plane on 127.0.0.1 for gantry's tests:
#   etcd -> kube-apiserver -> kube-controller-manager -> kube-scheduler -> kwok
# kwok plays a fake node (kwok-node-0): no kubelet, no containers; it moves
# pods to Running/Ready and Job pods to Succeeded. Binaries come from
# scripts/k8s/build.sh (or $GANTRY_K8S_BIN). Every port is a free one picked
# at start, so two clusters (or a leftover) never collide.
#
# Usage: start.sh STATE_DIR
# Writes STATE_DIR/kubeconfig (admin token, CA), STATE_DIR/ports, the PKI,
# etcd's data, the components' logs (STATE_DIR/logs) and pid files; stop with
# scripts/k8s/stop.sh STATE_DIR. On a failure it prints the tail of the
# failing component's log, stops what it started and exits 1.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 STATE_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
S=$(cd "$1" && pwd -P)
BIN=${GANTRY_K8S_BIN:-$("$here/build.sh" --print-bin)}
COMPONENTS=(etcd apiserver kcm scheduler kwok)   # stop.sh stops them in reverse
POLL=0.2                                          # seconds between readiness checks
# Readiness timeouts below are generous: on an idle 2-core machine the cluster
# is up in 3-5 s, but on a loaded one (a -race build beside it) 20-40 s was
# seen. A component that dies is noticed at once, whatever the timeout.

die() { echo "start.sh: $*" >&2; exit 1; }

for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
  [ -x "$BIN/$b" ] || die "$BIN/$b is missing: run scripts/k8s/build.sh first"
done
for t in openssl curl; do
  command -v "$t" >/dev/null 2>&1 || die "$t is needed and not on PATH"
done
for n in "${COMPONENTS[@]}"; do
  p=$(cat "$S/$n.pid" 2>/dev/null || true)
  if [[ "$p" =~ ^[0-9]+$ ]] && cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") && [[ "$cmd" == *"$S"* ]]; then
    die "a cluster is already running in $S ($n, pid $p): stop it with scripts/k8s/stop.sh $S"
  fi
done

t0=$SECONDS
ok=0
on_exit() {
  if [ "$ok" != 1 ]; then
    "$here/stop.sh" "$S" >/dev/null 2>&1 || true
    echo "start.sh: failed; stopped what it had started (state and logs in $S)" >&2
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Free loopback ports; a start that lost one to another process is tried
# again on new ports (below).
# shellcheck source=scripts/lib/ports.sh
. "$here/../lib/ports.sh"

# --- PKI: CA, serving certificate for 127.0.0.1, service-account keys, a
# static admin token.
P=$S/pki
mkdir -p "$S/logs" "$P"
ossl() { openssl "$@" >/dev/null 2>"$P/openssl.err" || { cat "$P/openssl.err" >&2; die "openssl $1 failed"; }; }
ossl req -x509 -newkey rsa:2048 -nodes -days 7 -keyout "$P/ca.key" -out "$P/ca.crt" -subj /CN=gantry-test-ca
ossl req -newkey rsa:2048 -nodes -keyout "$P/apiserver.key" -out "$P/apiserver.csr" -subj /CN=kube-apiserver
printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' > "$P/san.ext"
ossl x509 -req -in "$P/apiserver.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 7 \
  -out "$P/apiserver.crt" -extfile "$P/san.ext"
ossl genrsa -out "$P/sa.key" 2048
ossl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub"
TOKEN=$(openssl rand -hex 16)
echo "$TOKEN,admin,admin-uid,system:masters" > "$P/tokens.csv"
chmod 600 "$P"/*.key "$P/tokens.csv"

# --- kwok: the bare binary needs explicit Stage documents and parallelism
# options (these are kwok v0.8.0's node/fast, node/heartbeat-with-lease,
# pod/fast stages).
cat > "$S/kwok.yaml" <<'KWOK'
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  nodeLeaseDurationSeconds: 40
  nodeLeaseParallelism: 4
  podPlayStageParallelism: 4
  nodePlayStageParallelism: 4
  podsOnNodeSyncParallelism: 4
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type  | Quote}}
      {{ end }}

      {{ $hasInternalIP := false }}
      {{ $hasHostname := false }}
      {{ range .status.addresses }}
        {{ if eq .type "InternalIP" }}
          {{ $hasInternalIP = true }}
        {{ end }}
        {{ if eq .type "Hostname" }}
          {{ $hasHostname = true }}
        {{ end }}
      {{ end }}
      {{ if or (not $hasInternalIP) (not $hasHostname) }}
      addresses:
      {{ end }}
      {{ if not $hasInternalIP }}
      {{ with NodeIP }}
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      {{ end }}
      {{ if not $hasHostname }}
      {{ with NodeName }}
      - address: {{ . | Quote }}
        type: Hostname
      {{ end }}
      {{ end }}

      {{ with NodePort }}
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ . }}
      {{ end }}

      allocatable:
      {{ with .status.allocatable }}
      {{ YAML . 1 }}
      {{ else }}
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ end }}
      capacity:
      {{ with .status.capacity }}
      {{ YAML . 1 }}
      {{ else }}
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ end }}

      {{ $nodeInfo := .status.nodeInfo }}
      {{ $kwokVersion := printf "kwok-%s" Version }}
      nodeInfo:
        architecture: {{ or $nodeInfo.architecture "amd64" }}
        bootID: {{ or $nodeInfo.bootID `""` }}
        containerRuntimeVersion: {{ or $nodeInfo.containerRuntimeVersion $kwokVersion }}
        kernelVersion: {{ or $nodeInfo.kernelVersion $kwokVersion }}
        kubeProxyVersion: {{ or $nodeInfo.kubeProxyVersion $kwokVersion }}
        kubeletVersion: {{ or $nodeInfo.kubeletVersion $kwokVersion }}
        machineID: {{ or $nodeInfo.machineID `""` }}
        operatingSystem: {{ or $nodeInfo.operatingSystem "linux" }}
        osImage: {{ or $nodeInfo.osImage `""` }}
        systemUUID: {{ or $nodeInfo.systemUUID `""` }}
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-heartbeat-with-lease
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'In'
      values:
      - 'True'
  delay:
    durationMilliseconds: 600000
    jitterDurationMilliseconds: 610000
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}

      addresses:
      {{ with .status.addresses }}
      {{ YAML . 1 }}
      {{ else }}
      {{ with NodeIP }}
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      {{ with NodeName }}
      - address: {{ . | Quote }}
        type: Hostname
      {{ end }}
      {{ end }}

      {{ with NodePort }}
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ . }}
      {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}

      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      {{ range .spec.readinessGates }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}

      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}

      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        {{ if eq .restartPolicy "Always" }}
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
        {{ else }}
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
        {{ end }}
      {{ end }}
      {{ $hostIPs := NodeIPsWith .spec.nodeName }}
      {{ with $hostIPs }}
      hostIP: {{ index . 0 | Quote }}
      hostIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.ownerReferences.[].kind'
      operator: 'In'
      values:
      - 'Job'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $root := . }}
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      {{ $origin := index $root.status.containerStatuses $index }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    delete: true
KWOK

start() { # component, command...
  local name=$1; shift
  nohup "$@" </dev/null >"$S/logs/$name.log" 2>&1 &
  echo "$!" > "$S/$name.pid"
  started+=("$name")
}

failed="" reason=""
# Polls a readiness command until it succeeds, a started component exits, or
# the timeout passes. Every started component must still be running.
waitfor() { # component, timeout seconds, command...
  local comp=$1 t=$2 deadline=$((SECONDS + $2)) n; shift 2
  while :; do
    for n in "${started[@]}"; do
      if ! kill -0 "$(cat "$S/$n.pid")" 2>/dev/null; then
        failed=$n reason="exited before the cluster was up"; return 1
      fi
    done
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      failed=$comp reason="not ready after ${t}s"; return 1
    fi
    sleep "$POLL"
  done
}

mark() { echo "   $1 ($((SECONDS - t0))s)"; }

kc() { "$BIN/kubectl" --kubeconfig="$S/kubeconfig" --request-timeout=5s "$@"; }

# One try at starting everything on a fresh set of ports. Returns 1 on a
# failure ($failed, $reason say which and why).
attempt() {
  started=()
  local ports
  ports=$(free_ports 4) || { failed=ports reason="could not pick free ports"; return 1; }
  read -r API_PORT ETCD_PORT ETCD_PEER_PORT ETCD_METRICS_PORT <<<"$ports"
  printf 'API_PORT=%s\nETCD_PORT=%s\nETCD_PEER_PORT=%s\nETCD_METRICS_PORT=%s\n' \
    "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT" "$ETCD_METRICS_PORT" > "$S/ports"
  cat > "$S/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gantry-test
  cluster:
    server: "https://127.0.0.1:$API_PORT"
    certificate-authority: "$P/ca.crt"
users:
- name: admin
  user:
    token: "$TOKEN"
contexts:
- name: gantry-test
  context:
    cluster: gantry-test
    user: admin
current-context: gantry-test
EOF
  chmod 600 "$S/kubeconfig"
  rm -rf "$S/etcd"

  start etcd "$BIN/etcd" --name test --data-dir "$S/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "test=http://127.0.0.1:$ETCD_PEER_PORT" \
    --listen-metrics-urls "http://127.0.0.1:$ETCD_METRICS_PORT" \
    --unsafe-no-fsync
  waitfor etcd 60 curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" || return 1
  mark "etcd ready on 127.0.0.1:$ETCD_PORT"

  start apiserver "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --endpoint-reconciler-type=none \
    --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
    --token-auth-file="$P/tokens.csv" --authorization-mode=AlwaysAllow \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 --cert-dir="$S/apiserver-certs"
  waitfor apiserver 180 curl -sf --max-time 2 --cacert "$P/ca.crt" -H "Authorization: Bearer $TOKEN" \
    "https://127.0.0.1:$API_PORT/readyz" || return 1
  mark "kube-apiserver ready on 127.0.0.1:$API_PORT"

  start kcm "$BIN/kube-controller-manager" --kubeconfig="$S/kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=0 --leader-elect=false \
    --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
    --use-service-account-credentials=false --controllers='*'
  start scheduler "$BIN/kube-scheduler" --kubeconfig="$S/kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=0 --leader-elect=false
  start kwok "$BIN/kwok" -c "$S/kwok.yaml" --kubeconfig="$S/kubeconfig" --manage-all-nodes=true \
    --node-ip=127.0.0.1 --cidr=10.244.0.0/16

  # Pods need the default ServiceAccount, made by the controller-manager.
  waitfor kcm 120 kc get serviceaccount default -n default || return 1
  mark "controller-manager made the default ServiceAccount"
  kc apply -f "$S/node.yaml" >/dev/null 2>"$S/logs/node-apply.log" || {
    failed=node-apply reason="kubectl apply of the node failed"; return 1; }
  waitfor kwok 120 kc wait --for=condition=Ready node/kwok-node-0 --timeout=1s || return 1
  # The scheduler has no readiness check of its own: at least it must be running.
  waitfor scheduler 1 true || return 1
}

cat > "$S/node.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: kwok-node-0
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
spec: {}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
EOF

# A port picked free can still be taken before its server binds it: then stop
# and try again on new ports.
for try in 1 2 3; do
  started=()
  if attempt; then
    ok=1
    break
  fi
  logs=()
  for n in "${started[@]}"; do logs+=("$S/logs/$n.log"); done
  if [ "$try" -lt 3 ] && [ ${#logs[@]} -gt 0 ] && grep -qs 'address already in use' "${logs[@]}"; then
    echo "start.sh: a port was taken meanwhile ($failed); retrying on new ports" >&2
    "$here/stop.sh" "$S" >/dev/null 2>&1 || true
    for n in "${started[@]}"; do mv -f "$S/logs/$n.log" "$S/logs/$n.try$try.log"; done
    continue
  fi
  echo "start.sh: $failed $reason" >&2
  if [ -f "$S/logs/$failed.log" ]; then
    echo "---- last lines of $S/logs/$failed.log" >&2
    tail -n 40 "$S/logs/$failed.log" >&2
    echo "----" >&2
  fi
  exit 1
done

echo "cluster up in $((SECONDS - t0))s: export KUBECONFIG=$S/kubeconfig (apiserver https://127.0.0.1:$API_PORT)"
