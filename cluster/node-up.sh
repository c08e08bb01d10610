#!/usr/bin/env bash
# Adds a node to the test cluster's control plane (cluster/up.sh): its own
# containerd (Debian's, as a separate instance: own root, state, socket and
# runc root; the Docker engine's containerd is left alone), the CNI bridge,
# kubelet, kube-proxy, controller-manager and scheduler, and CoreDNS as
# kube-dns. Images are FROM scratch with one static binary, imported, never
# pulled. What it changes on the host is recorded first and undone by
# cluster/down.sh (../shared/k8s-cluster.md lists it, as measured here).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/bin/cluster"
STATE="$BIN/state"
NODE="$STATE/node"
NODE_NAME=sba-node
POD_CIDR=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16
DNS_IP=10.96.0.10
COREDNS_IMAGE=sba.local/coredns:1
# The NetworkPolicy enforcer: kube-network-policies as cluster/build.sh
# patched it for this kernel; SBA_ENFORCER=unpatched starts the release as
# is, which fails open here (policies present, not enforced).
ENFORCER_IMAGE=sba.local/kube-network-policies:1
ENFORCER_BIN=kube-network-policies
[[ "${SBA_ENFORCER:-}" == unpatched ]] && ENFORCER_BIN=kube-network-policies-unpatched
PAUSE_IMAGE=sba.local/pause:1
export PATH="/usr/local/go/bin:$PATH" KUBECONFIG="$BIN/kubeconfig"
KUBECTL="$BIN/kubectl"
API_PORT="$(sed -n 's|^ *server: https://127.0.0.1:\([0-9]*\)$|\1|p' "$KUBECONFIG" 2>/dev/null)"

log() { echo "cluster/node-up: $*" >&2; }
fail() {
	log "$*"
	# SBA_CLUSTER_KEEP=1 keeps a failed start for a look at its logs.
	[[ -n "${SBA_CLUSTER_KEEP:-}" ]] || "$(dirname "$0")/down.sh" >/dev/null 2>&1 || true
	exit 1
}

[[ -f "$KUBECONFIG" ]] || { log "no control plane: run cluster/up.sh first"; exit 1; }
if "$KUBECTL" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; then
	log "node $NODE_NAME is Ready"
	exit 0
fi
for b in kubelet kube-proxy kube-controller-manager kube-scheduler kubectl coredns "$ENFORCER_BIN" cni/bridge cni/host-local cni/loopback; do
	[[ -x "$BIN/$b" ]] || { log "no $BIN/$b: run cluster/build.sh"; exit 1; }
done
mkdir -p "$NODE"/{containerd,cni/net.d,cni/ipam,kubelet,images}
pki="$STATE/pki"

# What the node changes on the host, as it was before: down.sh puts it back.
NODE_IP="$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')"
[[ -n "$NODE_IP" ]] || fail "no IPv4 address with a default route for the node"
{
	for s in kernel.panic kernel.panic_on_oops vm.overcommit_memory; do echo "$s=$(sysctl -n "$s")"; done
} >"$NODE/sysctl.before"
nft list tables >"$NODE/nft.before" 2>/dev/null || true
[[ -e /var/lib/kubelet ]] && touch "$NODE/var-lib-kubelet.existed"
[[ -e /var/lib/cni ]] && touch "$NODE/var-lib-cni.existed"
ls /run/netns 2>/dev/null | grep '^cni-' >"$NODE/netns.before" || true

# Docker sets FORWARD's policy to DROP: let pod traffic through, in a chain
# of our own.
iptables -N SBA-FORWARD 2>/dev/null || iptables -F SBA-FORWARD
iptables -A SBA-FORWARD -s "$CLUSTER_CIDR" -j ACCEPT
iptables -A SBA-FORWARD -d "$CLUSTER_CIDR" -j ACCEPT
iptables -C FORWARD -j SBA-FORWARD 2>/dev/null || iptables -I FORWARD 1 -j SBA-FORWARD

# The node's client certificate, and the API server's for the kubelet.
openssl_q() { openssl "$@" >/dev/null 2>&1; }
openssl_q req -newkey rsa:2048 -nodes -subj "/CN=system:node:$NODE_NAME/O=system:nodes" -keyout "$pki/node.key" -out "$pki/node.csr"
openssl_q x509 -req -in "$pki/node.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 -out "$pki/node.crt"
sed -e "s|client-certificate: .*|client-certificate: $pki/node.crt|" -e "s|client-key: .*|client-key: $pki/node.key|" \
	"$KUBECONFIG" >"$NODE/kubelet.kubeconfig"

# Images: the sandbox and CoreDNS, built here.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$NODE/pause" ./cluster/pause
go build -o "$NODE/mkimage" ./cluster/mkimage
"$NODE/mkimage" -o "$NODE/images/pause.tar" -ref "$PAUSE_IMAGE" -path pause "$NODE/pause"
"$NODE/mkimage" -o "$NODE/images/coredns.tar" -ref "$COREDNS_IMAGE" -path coredns "$BIN/coredns" -conf /etc/coredns/Corefile
"$NODE/mkimage" -o "$NODE/images/enforcer.tar" -ref "$ENFORCER_IMAGE" -path kube-network-policies "$BIN/$ENFORCER_BIN"

# containerd: Debian's, an instance of our own.
CTRD="$NODE/containerd"
SOCK="$CTRD/containerd.sock"
cat >"$CTRD/config.toml" <<TOML
version = 2
root = "$CTRD/root"
state = "$CTRD/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # No CAP_SYS_RESOURCE here: sandboxes cannot get oom_score_adj -998.
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    # No overlay mount inside this machine's own overlay: plain copies.
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$CTRD/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$BIN/cni"
    conf_dir = "$NODE/cni/net.d"
TOML
setsid containerd --config "$CTRD/config.toml" >"$NODE/containerd.log" 2>&1 </dev/null &
echo $! >"$STATE/containerd.pid"
for _ in $(seq 1 60); do [[ -S "$SOCK" ]] && ctr --address "$SOCK" version >/dev/null 2>&1 && break; sleep 0.5; done
ctr --address "$SOCK" version >/dev/null 2>&1 || fail "containerd did not start: $NODE/containerd.log"
for t in "$NODE"/images/*.tar; do
	ctr --address "$SOCK" -n k8s.io images import --no-unpack=false "$t" >/dev/null || fail "importing $t"
done

cat >"$NODE/cni/net.d/10-sba.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "sba", "plugins": [{"type": "bridge", "bridge": "sba-cni0", "isGateway": true,
 "ipMasq": false, "hairpinMode": true, "ipam": {"type": "host-local", "dataDir": "$NODE/cni/ipam",
 "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
JSON

# The kubelet: cgroup v1 without systemd, its own cgroup root, no
# oom_score_adj it may not set.
for c in /sys/fs/cgroup/*/; do
	[[ -d "$c" && ! -L "${c%/}" ]] && mkdir -p "$c/sba-kubelet" 2>/dev/null || true
done
cat >"$NODE/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
cgroupDriver: cgroupfs
cgroupRoot: /sba-kubelet
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$SOCK
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
oomScoreAdj: 0
makeIPTablesUtilChains: false
localStorageCapacityIsolation: false
evictionHard: {"memory.available": "50Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
podCIDR: $POD_CIDR
YAML
setsid "$BIN/kubelet" --config "$NODE/kubelet.yaml" --kubeconfig "$NODE/kubelet.kubeconfig" --root-dir "$NODE/kubelet" \
	--hostname-override "$NODE_NAME" --node-ip "$NODE_IP" >"$NODE/kubelet.log" 2>&1 </dev/null &
echo $! >"$STATE/kubelet.pid"

setsid "$BIN/kube-controller-manager" --kubeconfig "$KUBECONFIG" --leader-elect=false --bind-address 127.0.0.1 --secure-port 0 \
	--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" --use-service-account-credentials=false \
	>"$NODE/kube-controller-manager.log" 2>&1 </dev/null &
echo $! >"$STATE/kube-controller-manager.pid"
setsid "$BIN/kube-scheduler" --kubeconfig "$KUBECONFIG" --leader-elect=false --bind-address 127.0.0.1 --secure-port 0 \
	>"$NODE/kube-scheduler.log" 2>&1 </dev/null &
echo $! >"$STATE/kube-scheduler.pid"

cat >"$NODE/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $KUBECONFIG}
mode: nftables
clusterCIDR: $CLUSTER_CIDR
hostnameOverride: $NODE_NAME
oomScoreAdj: 0
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:20256
metricsBindAddress: 127.0.0.1:20249
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
setsid "$BIN/kube-proxy" --config "$NODE/kube-proxy.yaml" >"$NODE/kube-proxy.log" 2>&1 </dev/null &
echo $! >"$STATE/kube-proxy.pid"

for _ in $(seq 1 120); do
	"$KUBECTL" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True && break
	kill -0 "$(cat "$STATE/kubelet.pid")" 2>/dev/null || { tail -5 "$NODE/kubelet.log" >&2; fail "the kubelet exited"; }
	sleep 0.5
done
"$KUBECTL" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -q True ||
	{ tail -5 "$NODE/kubelet.log" >&2; fail "node $NODE_NAME not Ready within 60 s"; }

for p in containerd kubelet kube-controller-manager kube-scheduler kube-proxy; do
	kill -0 "$(cat "$STATE/$p.pid")" 2>/dev/null || { tail -3 "$NODE/$p.log" >&2; fail "$p exited: $NODE/$p.log"; }
done

# CoreDNS as kube-dns, answering cluster names only (no forward: nothing
# leaves the machine).
"$KUBECTL" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: sba-coredns}
rules:
- {apiGroups: [""], resources: [services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: sba-coredns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sba-coredns}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health 127.0.0.1:8080
        ready 127.0.0.1:8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
        }
        cache 30
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        volumeMounts: [{name: config, mountPath: /etc/coredns}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
YAML
"$KUBECTL" -n kube-system rollout status deployment/coredns --timeout 90s >/dev/null ||
	fail "CoreDNS did not become ready: $KUBECTL -n kube-system describe pods"

# The NetworkPolicy enforcer reads the cluster as a pod does (in-cluster
# configuration only), on the host's network; the API server is on
# loopback, so it is told where.
"$KUBECTL" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-network-policies, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: sba-kube-network-policies}
rules:
- {apiGroups: [""], resources: [pods, namespaces, nodes], verbs: [get, list, watch]}
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: sba-kube-network-policies}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sba-kube-network-policies}
subjects: [{kind: ServiceAccount, name: kube-network-policies, namespace: kube-system}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: kube-network-policies, namespace: kube-system}
spec:
  selector: {matchLabels: {app: kube-network-policies}}
  template:
    metadata: {labels: {app: kube-network-policies}}
    spec:
      hostNetwork: true
      serviceAccountName: kube-network-policies
      containers:
      - name: enforcer
        image: $ENFORCER_IMAGE
        imagePullPolicy: Never
        args: ["--hostname-override=\$(NODE_NAME)", "--disable-nri", "--netfilter-bug-1766-fix=false",
               "--metrics-bind-address=127.0.0.1:29080", "--v=2"]
        env:
        - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: KUBERNETES_SERVICE_HOST, value: "127.0.0.1"}
        - {name: KUBERNETES_SERVICE_PORT, value: "$API_PORT"}
        securityContext: {privileged: true}
YAML
"$KUBECTL" -n kube-system rollout status daemonset/kube-network-policies --timeout 90s >/dev/null ||
	fail "the NetworkPolicy enforcer did not become ready: $KUBECTL -n kube-system logs ds/kube-network-policies"
log "node $NODE_NAME ($NODE_IP) Ready, CoreDNS at $DNS_IP, NetworkPolicy enforcer $ENFORCER_BIN"
