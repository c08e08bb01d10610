#!/usr/bin/env bash
# Starts the test cluster's control plane (etcd and kube-apiserver, from
# bin/cluster: cluster/build.sh) on loopback and writes its kubeconfig to
# bin/cluster/kubeconfig. Idempotent: a control plane that answers is kept.
# cluster/down.sh stops it and removes its state.
#
# This is the first part of the cluster issue 11 asks for: the API server
# and its authorizer, enough for the checks made from the cluster's API.
# The kubelet, its containerd, CNI, kube-proxy, CoreDNS and the policy
# enforcer come with the checks made from where a run stands.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/bin/cluster"
STATE="$BIN/state"
API_PORT="${SSEBENCH_AUDIT_CLUSTER_API_PORT:-16443}"
# The machine's own address: pods reach the API server there, through the
# kubernetes Service (CoreDNS and the enforcer read the cluster).
NODE_IP="$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')"
NODE_IP="${NODE_IP:-127.0.0.1}"
ETCD_PORT="${SSEBENCH_AUDIT_CLUSTER_ETCD_PORT:-23790}"
KUBECONFIG_OUT="$BIN/kubeconfig"

log() { echo "cluster/up: $*" >&2; }
# A start that fails stops what it started: nothing is left running.
fail() {
	log "$*"
	"$(dirname "$0")/down.sh" >/dev/null 2>&1 || true
	exit 1
}

ready() {
	curl -fsS --max-time 2 --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" \
		"https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1
}

if [[ -f "$STATE/pki/ca.crt" ]] && ready; then
	log "the control plane answers on 127.0.0.1:$API_PORT"
	exit 0
fi
for b in etcd kube-apiserver; do
	[[ -x "$BIN/$b" ]] || { log "no $BIN/$b: run cluster/build.sh (make cluster-build)"; exit 1; }
done
"$(dirname "$0")/down.sh" >/dev/null 2>&1 || true # what a crashed start left
mkdir -p "$STATE/pki" "$STATE/etcd"
chmod 700 "$STATE"

# Certificates: a CA, the API server's serving pair, the admin's client
# pair (system:masters) and the service-account signing key.
pki="$STATE/pki"
openssl_q() { openssl "$@" >/dev/null 2>&1; }
openssl_q req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=ssebench-audit-test-ca" -keyout "$pki/ca.key" -out "$pki/ca.crt"
cat >"$pki/san.cnf" <<CNF
[v3]
subjectAltName = IP:127.0.0.1, IP:$NODE_IP, IP:10.96.0.1, DNS:localhost, DNS:kubernetes.default.svc
extendedKeyUsage = serverAuth
CNF
openssl_q req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr"
openssl_q x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 \
	-extfile "$pki/san.cnf" -extensions v3 -out "$pki/apiserver.crt"
openssl_q req -newkey rsa:2048 -nodes -subj "/CN=admin/O=system:masters" -keyout "$pki/admin.key" -out "$pki/admin.csr"
openssl_q x509 -req -in "$pki/admin.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 -out "$pki/admin.crt"
# The API server's client pair for the kubelet (logs, exec).
openssl_q req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver-kubelet-client/O=system:masters" -keyout "$pki/apiserver-kubelet.key" -out "$pki/apiserver-kubelet.csr"
openssl_q x509 -req -in "$pki/apiserver-kubelet.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 -out "$pki/apiserver-kubelet.crt"
openssl_q genrsa -out "$pki/sa.key" 2048
openssl_q rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"

setsid "$BIN/etcd" --name default --data-dir "$STATE/etcd" \
	--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
	--listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 10))" --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 10))" \
	--initial-cluster "default=http://127.0.0.1:$((ETCD_PORT + 10))" --listen-metrics-urls "" \
	>"$STATE/etcd.log" 2>&1 </dev/null &
echo $! >"$STATE/etcd.pid"

# Served on the machine's address too (anonymous requests refused), which
# the kubernetes Service publishes for pods.
setsid "$BIN/kube-apiserver" --bind-address 0.0.0.0 --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
	--etcd-servers "http://127.0.0.1:$ETCD_PORT" --service-cluster-ip-range 10.96.0.0/16 \
	--tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
	--service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
	--service-account-issuer https://kubernetes.default.svc --authorization-mode Node,RBAC \
	--kubelet-client-certificate "$pki/apiserver-kubelet.crt" --kubelet-client-key "$pki/apiserver-kubelet.key" \
	--kubelet-preferred-address-types InternalIP \
	--profiling=false --cert-dir "$pki" --anonymous-auth=false --allow-privileged \
	>"$STATE/kube-apiserver.log" 2>&1 </dev/null &
echo $! >"$STATE/kube-apiserver.pid"

for _ in $(seq 1 120); do
	ready && break
	if ! kill -0 "$(cat "$STATE/kube-apiserver.pid")" 2>/dev/null; then
		tail -3 "$STATE/kube-apiserver.log" >&2
		fail "kube-apiserver exited (ports in use? SSEBENCH_AUDIT_CLUSTER_API_PORT and _ETCD_PORT choose others)"
	fi
	sleep 0.5
done
ready || fail "kube-apiserver not ready within 60 s"

cat >"$KUBECONFIG_OUT" <<KC
apiVersion: v1
kind: Config
clusters:
- name: ssebench-audit-test
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $pki/ca.crt
users:
- name: admin
  user:
    client-certificate: $pki/admin.crt
    client-key: $pki/admin.key
contexts:
- name: ssebench-audit-test
  context: {cluster: ssebench-audit-test, user: admin}
current-context: ssebench-audit-test
KC
log "the control plane answers on 127.0.0.1:$API_PORT; kubeconfig: $KUBECONFIG_OUT"
