#!/usr/bin/env bash
# Stops the test cluster (the node of cluster/node-up.sh, then the control
# plane of cluster/up.sh), puts back what the node changed on the host and
# removes the cluster's state and kubeconfig; the cached binaries stay.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/bin/cluster"
STATE="$BIN/state"
NODE="$STATE/node"
SOCK="$NODE/containerd/containerd.sock"

alive() { [[ -f "$STATE/$1.pid" ]] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }
stop() {
	local f="$STATE/$1.pid" pid
	[[ -f "$f" ]] || return 0
	pid="$(cat "$f")"
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	fi
	rm -f "$f"
}
ctr_() { ctr --address "$SOCK" -n k8s.io "$@"; }

if [[ -d "$NODE" ]]; then
	# Pods first, while the kubelet can stop them: their sandboxes' network
	# namespaces go with them.
	if alive kubelet && alive kube-apiserver; then
		KUBECONFIG="$BIN/kubeconfig" "$BIN/kubectl" delete pods --all -A --grace-period=0 --force --wait=false >/dev/null 2>&1
		for _ in $(seq 1 60); do
			[[ -z "$(ctr_ tasks ls -q 2>/dev/null)" ]] && break
			sleep 0.5
		done
	fi
	for p in kubelet kube-proxy kube-scheduler kube-controller-manager; do stop "$p"; done
	"$BIN/kube-proxy" --cleanup >/dev/null 2>&1
	if alive containerd; then
		for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
		sleep 1
		for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$t" >/dev/null 2>&1; done
	fi
	stop containerd
	pkill -KILL -f "containerd-shim-runc-v2 .*-address $SOCK" 2>/dev/null
	# Mounts under the node's state (sandbox /dev/shm, volumes), deepest first.
	awk -v d="$NODE" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	for ns in /run/netns/cni-*; do
		[[ -e "$ns" ]] || continue
		grep -qxF "$(basename "$ns")" "$NODE/netns.before" 2>/dev/null || { umount "$ns" 2>/dev/null; rm -f "$ns"; }
	done
	ip link del sba-cni0 2>/dev/null
	iptables -D FORWARD -j SBA-FORWARD 2>/dev/null
	iptables -F SBA-FORWARD 2>/dev/null
	iptables -X SBA-FORWARD 2>/dev/null
	# The kubelet's chains, in every table it may have put them.
	for table in filter nat mangle; do
		for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT KUBE-MARK-DROP KUBE-MARK-MASQ KUBE-POSTROUTING; do
			for hook in INPUT OUTPUT FORWARD PREROUTING POSTROUTING; do
				while iptables -t "$table" -D "$hook" -j "$chain" 2>/dev/null; do :; done
			done
			iptables -t "$table" -F "$chain" 2>/dev/null
			iptables -t "$table" -X "$chain" 2>/dev/null
		done
	done
	# nft tables the node's components added: their own (kube-proxy's, the
	# enforcer's, killed before they could remove them) and the empty ones
	# the kubelet leaves.
	if [[ -f "$NODE/nft.before" ]]; then
		nft list tables 2>/dev/null | while read -r _ family name; do
			grep -qx "table $family $name" "$NODE/nft.before" && continue
			if [[ "$name" == kube-* ]] || [[ -z "$(nft list table "$family" "$name" 2>/dev/null | grep -E '^\s+(chain|set|map)')" ]]; then
				nft delete table "$family" "$name" 2>/dev/null
			fi
		done
	fi
	if [[ -f "$NODE/sysctl.before" ]]; then
		while IFS='=' read -r k v; do sysctl -qw "$k=$v" >/dev/null 2>&1; done <"$NODE/sysctl.before"
	fi
	for c in /sys/fs/cgroup/*/sba-kubelet; do
		[[ -d "$c" ]] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	[[ -f "$NODE/var-lib-kubelet.existed" ]] || rm -rf /var/lib/kubelet
	[[ -f "$NODE/var-lib-cni.existed" ]] || rm -rf /var/lib/cni
fi
for p in kube-apiserver etcd; do stop "$p"; done
rm -rf "$STATE" "$BIN/kubeconfig"
echo "cluster/down: stopped; nothing of it is left" >&2
