#!/usr/bin/env bash
# Stops the test cluster's control plane and removes its state and
# kubeconfig; the cached binaries stay (cluster/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
STATE="$PWD/bin/cluster/state"
for p in kube-apiserver etcd; do
	f="$STATE/$p.pid"
	[[ -f "$f" ]] || continue
	pid="$(cat "$f")"
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
done
rm -rf "$STATE" "$PWD/bin/cluster/kubeconfig"
echo "cluster/down: stopped; nothing of it is left" >&2
