#!/usr/bin/env bash
# Builds the test cluster's binaries from the Go module proxy, once per
# version set: they are cached outside the checkout (a cold build takes
# minutes on 2 cores; ../shared/k8s-cluster.md has the measurements) and
# linked into bin/cluster. Nothing here is fetched from anywhere else.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH" CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
KNP_VERSION="${KNP_VERSION:-v0.8.0}"
# The published staging modules that match K8S_VERSION (v1.37.2 -> v0.37.2).
STAGING_VERSION="v0${K8S_VERSION#v1}"
CACHE="${SSEBENCH_AUDIT_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ssebench-audit/cluster}"
# The enforcer's patch is part of the key: a changed patch builds again.
KNP_PATCH="$(sha256sum cluster/knp/xtqueue.go.in | cut -c1-12)"
KEY="k8s-$K8S_VERSION-etcd-$ETCD_VERSION-coredns-$COREDNS_VERSION-knp-$KNP_VERSION-$KNP_PATCH"
OUT="$CACHE/$KEY"
K8S_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
# The CNI plugins the node uses, from Debian's package (unpacked, not installed).
CNI_PLUGINS=(bridge host-local loopback)

log() { echo "cluster/build: $*" >&2; }

# module_copy MODULE@VERSION DIR: a writable copy of a module's source, its
# replace directives dropped (they point into the repository, which the
# module zip does not hold) and its v0.0.0 requirements pinned to what is
# published.
module_copy() {
	local dir
	dir="$(go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
	[[ -n "$dir" ]] || { log "cannot download $1"; exit 1; }
	rm -rf "$2"
	cp -r "$dir" "$2"
	chmod -R u+w "$2"
	rm -rf "$2/vendor" "$2"/go.work*
	(
		cd "$2"
		for r in $(go mod edit -json | sed -n 's/^\t\t\t"Path": "\(.*\)",\{0,1\}$/\1/p' | sort -u); do
			go mod edit -dropreplace="$r" 2>/dev/null || true
		done
	)
}

build_kubernetes() {
	local src="$WORK/kubernetes"
	module_copy "k8s.io/kubernetes@$K8S_VERSION" "$src"
	(
		cd "$src"
		for m in $(go mod edit -json | awk '/"Require"/,/\]/' | grep -o '"Path": "k8s.io/[^"]*"' | cut -d'"' -f4); do
			if go mod edit -json | grep -A1 "\"Path\": \"$m\"" | grep -q '"Version": "v0.0.0"'; then
				go mod edit -require="$m@$STAGING_VERSION"
			fi
		done
		local major minor
		major="${K8S_VERSION#v}"; major="${major%%.*}"
		minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
		local ld="-s -w"
		for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
			ld+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
		done
		local pkgs=()
		for c in "${K8S_COMMANDS[@]}"; do pkgs+=("./cmd/$c"); done
		log "building ${K8S_COMMANDS[*]} $K8S_VERSION (cold: minutes)"
		go build -trimpath -ldflags "$ld" -o "$OUT.partial/" "${pkgs[@]}"
	)
}

# build_knp builds the NetworkPolicy enforcer twice: as released
# (kube-network-policies-unpatched: on this kernel it fails open, the
# "policy present, not enforced" mutant) and with its nfqueue verdicts sent
# through the xtables NFQUEUE target (cluster/knp/xtqueue.go.in says why).
build_knp() {
	local src="$WORK/knp"
	module_copy "sigs.k8s.io/kube-network-policies@$KNP_VERSION" "$src"
	log "building kube-network-policies $KNP_VERSION, as released and patched"
	(cd "$src" && go build -trimpath -ldflags "-s -w" -o "$OUT.partial/kube-network-policies-unpatched" ./cmd)
	cp cluster/knp/xtqueue.go.in "$src/pkg/networkpolicy/zz_sba_xtqueue.go"
	perl -0pi -e 's/queue := &expr\.Queue\{Num: uint16\(c\.config\.QueueID\)\}\n\tif c\.config\.FailOpen \{\n\t\tqueue\.Flag = expr\.QueueFlagBypass\n\t\}/queue := xtQueue(uint16(c.config.QueueID), c.config.FailOpen)/g' \
		"$src/pkg/networkpolicy/controller.go"
	perl -0pi -e 's/&expr\.Queue\{Num: uint16\(n\.nfQueueID\), Flag: expr\.QueueFlagBypass\}/xtQueue(uint16(n.nfQueueID), true)/g' \
		"$src/pkg/networkpolicy/dnsagent.go"
	if grep -q 'expr\.Queue{' "$src/pkg/networkpolicy/controller.go" "$src/pkg/networkpolicy/dnsagent.go"; then
		log "the enforcer's source changed: cluster/knp/xtqueue.go.in's edits no longer apply"
		exit 1
	fi
	(cd "$src" && go build -trimpath -ldflags "-s -w" -o "$OUT.partial/kube-network-policies" ./cmd)
}

build_coredns() {
	log "building coredns $COREDNS_VERSION"
	GOBIN="$OUT.partial" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
}

fetch_cni() {
	log "unpacking the CNI plugins from Debian's containernetworking-plugins"
	(cd "$WORK" && apt-get download containernetworking-plugins >/dev/null && dpkg-deb -x containernetworking-plugins_*.deb cni)
	mkdir -p "$OUT.partial/cni"
	for p in "${CNI_PLUGINS[@]}"; do
		cp "$(find "$WORK/cni" -type f -name "$p" | head -1)" "$OUT.partial/cni/$p"
	done
}

# busybox, statically linked: the tar (and shell) of the tests' run pods,
# which the in-container checks copy the probe in with, as `kubectl cp`
# needs a tar in the container.
fetch_busybox() {
	log "unpacking busybox from Debian's busybox-static"
	(cd "$WORK" && apt-get download busybox-static >/dev/null && dpkg-deb -x busybox-static_*.deb busybox)
	cp "$WORK/busybox/bin/busybox" "$OUT.partial/busybox"
}

build_etcd() {
	local src="$WORK/etcd"
	module_copy "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "$src"
	log "building etcd $ETCD_VERSION"
	(cd "$src" && go build -trimpath -ldflags "-s -w" -o "$OUT.partial/etcd" .)
}

missing() {
	for c in etcd coredns kube-network-policies kube-network-policies-unpatched busybox "${K8S_COMMANDS[@]}"; do [[ -x "$OUT/$c" ]] || echo "$c"; done
	for p in "${CNI_PLUGINS[@]}"; do [[ -x "$OUT/cni/$p" ]] || echo "cni/$p"; done
}
if [[ -n "$(missing)" ]]; then
	WORK="$(mktemp -d)"
	trap 'rm -rf "$WORK" "$OUT.partial"' EXIT
	mkdir -p "$OUT.partial"
	[[ -d "$OUT" ]] && cp -a "$OUT"/. "$OUT.partial"/
	# What an earlier version set of this cache built is reused where it matches.
	for old in "$CACHE"/k8s-"$K8S_VERSION"-etcd-"$ETCD_VERSION"*; do
		[[ -d "$old" && "$old" != "$OUT" && "$old" != "$OUT.partial" ]] || continue
		for b in "$old"/*; do
			case "$(basename "$b")" in kube-network-policies*) continue ;; esac # keyed on the patch
			[[ -e "$OUT.partial/$(basename "$b")" ]] || cp -a "$b" "$OUT.partial/"
		done
	done
	for c in "${K8S_COMMANDS[@]}"; do
		[[ -x "$OUT.partial/$c" ]] || { build_kubernetes; break; }
	done
	[[ -x "$OUT.partial/etcd" ]] || build_etcd
	[[ -x "$OUT.partial/coredns" ]] || build_coredns
	[[ -x "$OUT.partial/kube-network-policies" && -x "$OUT.partial/kube-network-policies-unpatched" ]] || build_knp
	[[ -x "$OUT.partial/cni/bridge" && -x "$OUT.partial/cni/host-local" && -x "$OUT.partial/cni/loopback" ]] || fetch_cni
	[[ -x "$OUT.partial/busybox" ]] || fetch_busybox
	rm -rf "$OUT"
	mv "$OUT.partial" "$OUT"
	# One version set is kept: the binaries are large (about 700 MB).
	for old in "$CACHE"/k8s-*; do
		[[ "$old" == "$OUT" || "$old" == *.partial ]] || rm -rf "$old"
	done
fi
mkdir -p bin/cluster
for b in "$OUT"/*; do
	ln -sfn "$b" "bin/cluster/$(basename "$b")"
done
# The cluster's kubectl where the interface promises it (`make cluster`
# writes the kubeconfig it needs: bin/kubectl --kubeconfig bin/cluster/kubeconfig).
ln -sfn cluster/kubectl bin/kubectl
log "binaries in $OUT"
