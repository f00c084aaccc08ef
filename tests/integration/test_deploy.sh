#!/usr/bin/env bash
# The DaemonSet as a node would run it, without a cluster:
#  - deploy/daemonset.yaml is valid against the Kubernetes API schema
#    (kubernetes-models, offline) and keeps what deploy/README.md promises;
#  - the image (deploy/Dockerfile, built by deploy/image.sh with podman from a
#    debootstrap base; cached) runs under runc with exactly the manifest's
#    capabilities, securityContext (no_new_privs, read-only root, its seccomp
#    profile), mounts and limits, in the host's pid namespace;
#  - mid-run, every collector thread holds only the capabilities it keeps
#    after start-up (CapEff, CapPrm, CapBnd), none inheritable or ambient,
#    with NoNewPrivs and a seccomp filter;
#  - /metrics passes `promtool check metrics` and a real Prometheus server
#    scrapes it; /healthz says ok on the health port the probes use;
#  - host processes burning CPU, in a cgroup named like a pod's container with
#    kubelet-style log links for it, show up with their pid, comm, node, pod,
#    namespace and container labels, named user frames (the shares workload)
#    and named kernel frames (dd on /dev/zero);
#  - the collector's RSS and CPU, for the manifest's requests and limits;
#  - profiles leave the node from the image too: a scrape of
#    /debug/pprof/profile on the metrics port, and --push-config reading the
#    Secret ctxprof-push (here a directory with url and token) pushes each
#    interval to a Pyroscope receiver, the pod's burners as the series
#    ctxprof-test/burner{pod,namespace,container,node}.
. "$(dirname "$0")/lib.sh"
need_root
for tool in podman runc debootstrap node npm promtool prometheus curl jq; do
	command -v "$tool" > /dev/null || skip "$tool is not installed (make deps installs it)"
done
cd "$ROOT"
SHARES=$WORKLOADS/shares
[ -x "$SHARES" ] || { echo "FAIL: $SHARES not built"; exit 1; }
NODE=ctxprof-test-node
ID=$(printf 'ctxprof-test-%s' "$$" | sha256sum | cut -c1-64)
CTR=ctxprof-test-$$
B=$TMP/bundle
NPM=$OUTPUT/npm

# --- the manifest, offline
if [ ! -d "$NPM/node_modules/kubernetes-models" ] || [ ! -d "$NPM/node_modules/js-yaml" ]; then
	mkdir -p "$NPM"
	(cd "$NPM" && npm install --no-audit --no-fund --no-save --prefix . \
		kubernetes-models@5.1.0 js-yaml@4.1.0 > npm.log 2>&1) ||
		{ tail -5 "$NPM/npm.log"; fail "npm install kubernetes-models js-yaml"; finish; }
fi
node tests/integration/deploy/manifest.mjs validate "$NPM" deploy/daemonset.yaml \
	> "$TMP/container.json" 2> "$TMP/validate.log"
rc=$?
cat "$TMP/validate.log"
[ $rc -eq 0 ] && ok "deploy/daemonset.yaml: valid Kubernetes objects, and what deploy/README.md promises" ||
	fail "deploy/daemonset.yaml does not validate"
# the validator does catch a wrong type and a capability it must not have
sed -e 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: "yes"/' \
	-e 's/add: \[BPF,/add: [SYS_ADMIN, BPF,/' deploy/daemonset.yaml > "$TMP/broken.yaml"
node tests/integration/deploy/manifest.mjs validate "$NPM" "$TMP/broken.yaml" > /dev/null 2> "$TMP/broken.log"
grep -q "readOnlyRootFilesystem must be boolean" "$TMP/broken.log" && grep -q "no SYS_ADMIN" "$TMP/broken.log" &&
	ok "a broken manifest is refused: $(tr '\n' ';' < "$TMP/broken.log" | cut -c1-150)" ||
	fail "a broken manifest was not refused: $(cat "$TMP/broken.log")"

# --- the image (cached: built again only when a source changes)
start=$(date +%s)
IMAGE=$(OUTPUT=$OUTPUT deploy/image.sh) && IMAGE=${IMAGE##*$'\n'} && [ -n "$IMAGE" ] ||
	{ fail "deploy/image.sh failed"; finish; }
ok "image $IMAGE ready in $(($(date +%s) - start)) s ($(podman image inspect --format '{{.Size}}' "$IMAGE") bytes)"
mkdir -p "$B/rootfs" "$B/out" "$B/logs/pods" "$B/logs/containers"
c=$(podman create "$IMAGE") && podman export "$c" | tar -x -C "$B/rootfs" && podman rm "$c" > /dev/null
[ -x "$B/rootfs/usr/local/bin/collector" ] && [ ! -e "$B/rootfs/bin/sh" ] &&
	ok "the image holds the collector and its libraries, no shell: $(cd "$B/rootfs" && find . -type f | wc -l) files" ||
	fail "unexpected image content: $(cd "$B/rootfs" && find . -maxdepth 3 | head -20 | tr '\n' ' ')"

# --- a pod's container on this node: a cgroup named by its id, kubelet log links
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then CG_ROOT=/sys/fs/cgroup
elif [ -d /sys/fs/cgroup/unified ]; then CG_ROOT=/sys/fs/cgroup/unified
else CG_ROOT=/sys/fs/cgroup/pids; fi
CG=$CG_ROOT/kubepods-ctxprof-test/pod$$/$ID
mkdir -p "$CG" || skip "cannot create a cgroup under $CG_ROOT"
UID_=0000-ctxprof-$$
mkdir -p "$B/logs/pods/ctxprof-test_burner-pod_$UID_/burner"
ln -s "/var/log/pods/ctxprof-test_burner-pod_$UID_/burner/0.log" \
	"$B/logs/containers/burner-pod_ctxprof-test_burner-$ID.log"
cleanup_deploy() {
	runc kill "$CTR" KILL 2> /dev/null
	runc delete -f "$CTR" 2> /dev/null
	[ -f "$CG/cgroup.procs" ] && for p in $(cat "$CG/cgroup.procs"); do kill -9 "$p" 2> /dev/null; done
	sleep 0.2
	rmdir "$CG" "$(dirname "$CG")" "$(dirname "$(dirname "$CG")")" 2> /dev/null
}
trap 'cleanup_deploy; cleanup' EXIT

# --- run it as the manifest says
PORT=$(free_port $((19000 + $$ % 500)))
HEALTH_PORT=$(free_port $((PORT + 1)))
PROM_PORT=$(free_port $((HEALTH_PORT + 1)))
# the Secret ctxprof-push: a store to push to, a token
PUSH_PORT=$(free_port $((PROM_PORT + 1)))
mkdir -p "$B/push" "$TMP/store"
echo "http://127.0.0.1:$PUSH_PORT" > "$B/push/url"
echo deploy-t0ken > "$B/push/token"
python3 tests/integration/pyroscope_receiver.py --port "$PUSH_PORT" --store "$TMP/store" \
	--auth "Bearer deploy-t0ken" > "$TMP/receiver.out" 2>&1 &
PIDS+=($!)
(cd "$B" && runc spec && mv config.json base.json)
node tests/integration/deploy/manifest.mjs runc "$NPM" deploy/daemonset.yaml "$B/base.json" "$(jq -nc \
	--arg rootfs "$B/rootfs" --arg node "$NODE" --arg seccomp "$ROOT/deploy/seccomp" \
	--arg port ":$PORT" --arg hport ":$HEALTH_PORT" --arg out "$B/out" --arg pods "$B/logs/pods" \
	--arg ctrs "$B/logs/containers" --arg push "$B/push" \
	'{rootfs: $rootfs, entrypoint: ["/usr/local/bin/collector"], node: $node, seccompDir: $seccomp,
	  args: {"--interval": "5", "--metrics-addr": $port, "--health-addr": $hport},
	  hostPaths: {"/var/lib/ctxprof": $out, "/var/log/pods": $pods, "/var/log/containers": $ctrs},
	  secrets: {"ctxprof-push": $push}}')" \
	> "$B/config.json" || { fail "no runc configuration"; finish; }
jq -c '{caps: .process.capabilities.effective, nnp: .process.noNewPrivileges, ro: .root.readonly,
	seccomp: (.linux.seccomp.syscalls | length), mem: .linux.resources.memory.limit,
	mounts: [.mounts[] | select(.type == "bind") | "\(.destination):\(.options[1])"]}' "$B/config.json"
runc run --bundle "$B" "$CTR" > "$TMP/collector.out" 2> "$TMP/collector.log" &
runner=$!
PIDS+=($runner)
healthy=""
for _ in $(seq 1 120); do
	healthy=$(curl -s "http://127.0.0.1:$HEALTH_PORT/healthz") && [ "$healthy" = ok ] && break
	kill -0 $runner 2> /dev/null || break
	sleep 0.5
done
[ "$healthy" = ok ] && ok "the collector runs under runc with the manifest's settings; /healthz: ok" ||
	{ cat "$TMP/collector.log"; fail "the collector did not become healthy"; finish; }
pid=$(runc state "$CTR" | jq -r .pid)

# mid-run: the capability sets of every thread, no_new_privs, seccomp, read-only root
want=$(printf '%016x' $(((1 << 19) | (1 << 2) | (1 << 40)))) # SYS_PTRACE DAC_READ_SEARCH CHECKPOINT_RESTORE
bad=0 nr=0
for t in /proc/"$pid"/task/*; do
	nr=$((nr + 1))
	s=$(awk '/^Cap(Inh|Prm|Eff|Bnd|Amb)|^NoNewPrivs|^Seccomp:/ { printf "%s%s ", $1, $2 }' "$t/status")
	[ "$s" = "CapInh:0000000000000000 CapPrm:$want CapEff:$want CapBnd:$want CapAmb:0000000000000000 NoNewPrivs:1 Seccomp:2 " ] ||
		{ bad=$((bad + 1)); echo "thread ${t##*/}: $s"; }
done
[ "$bad" -eq 0 ] && ok "all $nr threads mid-run: CapEff = CapPrm = CapBnd = $want ($(capsh --decode="$want" 2>/dev/null | cut -d= -f2)), none inheritable or ambient, NoNewPrivs 1, seccomp filter on" ||
	fail "$bad of $nr threads hold other capabilities or lack no_new_privs/seccomp"
awk '$5 == "/" { print $6 }' /proc/"$pid"/mountinfo | grep -q '^ro' && ok "its root file system is read-only" ||
	fail "its root file system is writable"

# host processes in the pod's cgroup: user frames (shares), kernel frames (dd)
sh -c "echo \$\$ > $CG/cgroup.procs && exec $SHARES --seconds 12" &
shares=$!
sh -c "echo \$\$ > $CG/cgroup.procs && exec dd if=/dev/zero of=/dev/null bs=1M" 2> /dev/null &
dd=$!
PIDS+=($shares $dd)

# metrics: promtool, then a real Prometheus server scraping it
curl -s "http://127.0.0.1:$PORT/metrics" > "$TMP/metrics.txt"
promtool check metrics < "$TMP/metrics.txt" > "$TMP/promtool.log" 2>&1 &&
	ok "promtool check metrics: $(grep -c '^# TYPE' "$TMP/metrics.txt") metric families, no problem" ||
	fail "promtool check metrics: $(cat "$TMP/promtool.log")"
cat > "$TMP/prometheus.yml" <<-EOF
	global: {scrape_interval: 1s, scrape_timeout: 1s}
	scrape_configs:
	  - job_name: ctxprof
	    static_configs: [{targets: ["127.0.0.1:$PORT"]}]
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address="127.0.0.1:$PROM_PORT" > "$TMP/prometheus.log" 2>&1 &
PIDS+=($!)
query() {
	curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty' 2> /dev/null
}
up="" taken=""
for _ in $(seq 1 60); do
	up=$(query 'up{job="ctxprof"}')
	taken=$(query 'ctxprof_samples_taken_total{job="ctxprof"}')
	[ "$up" = 1 ] && [ -n "$taken" ] && [ "$taken" -gt 0 ] && break
	sleep 0.5
done
[ "$up" = 1 ] && [ -n "$taken" ] && [ "$taken" -gt 0 ] &&
	ok "Prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') scrapes it: up 1, ctxprof_samples_taken_total $taken" ||
	{ tail -5 "$TMP/prometheus.log"; fail "Prometheus did not scrape the collector (up=$up taken=$taken)"; }

# the next 2 s of CPU profile, as Alloy and Parca fetch it from the annotated port
curl -s -m 15 -D "$TMP/scrape.h" -o "$TMP/scrape.pb.gz" "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2&pod=burner-pod"
grep -qi '^content-type: application/octet-stream' "$TMP/scrape.h" &&
	"$PPROF" -raw "$TMP/scrape.pb.gz" 2> /dev/null | grep -q "pod:\[burner-pod\]" &&
	ok "/debug/pprof/profile?seconds=2&pod=burner-pod from the image: the pod's samples" ||
	fail "no profile of the burner pod from /debug/pprof/profile: $(head -1 "$TMP/scrape.h")"

# RSS and CPU while the burners run, for the manifest's requests and limits
cpu0=$(awk '{ print $14 + $15 }' /proc/"$pid"/stat)
sleep 10
cpu1=$(awk '{ print $14 + $15 }' /proc/"$pid"/stat)
rss=$(awk '/^VmRSS/ { print $2 }' /proc/"$pid"/status)
hwm=$(awk '/^VmHWM/ { print $2 }' /proc/"$pid"/status)
# the container's memory cgroup: its RSS, page cache and BPF maps (charged to it)
memcg=$(awk -F: '$2 == "memory" { print "/sys/fs/cgroup/memory" $3 "/memory.max_usage_in_bytes" }
	$1 == "0" && $2 == "" { print "/sys/fs/cgroup" $3 "/memory.peak" }' /proc/"$pid"/cgroup | head -1)
mem=$(cat "$memcg" 2> /dev/null || echo 0)
echo "measured: collector RSS $((rss / 1024)) MiB (peak $((hwm / 1024)) MiB), memory cgroup peak $((mem / 1048576)) MiB, CPU $(awk -v t=$((cpu1 - cpu0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", t * 1000 / hz / 10 }') millicores over 10 s"
limit=$(jq -r '.linux.resources.memory.limit' "$B/config.json")
[ "$mem" -gt 0 ] && [ "$mem" -lt "$limit" ] && ok "memory cgroup peak $((mem / 1048576)) MiB is below the manifest's limit $((limit / 1048576)) MiB" ||
	fail "memory cgroup peak $mem >= limit $limit"
curl -s "http://127.0.0.1:$HEALTH_PORT/healthz" | grep -qx ok && curl -s "http://127.0.0.1:$PORT/healthz" | grep -qx ok &&
	ok "/healthz still ok under load, on the health port and the metrics port" || fail "/healthz not ok under load"

kill $dd 2> /dev/null
wait $shares $dd 2> /dev/null
runc kill "$CTR" TERM
for _ in $(seq 1 60); do kill -0 $runner 2> /dev/null || break; sleep 0.5; done
wait $runner
rc=$?
tail -12 "$TMP/collector.log"
[ $rc -eq 0 ] && ok "SIGTERM: the collector wrote its last profile and exited 0" || fail "the collector exited $rc"
grep -q "^ctxprof: capabilities kept after start-up: cap_sys_ptrace,cap_dac_read_search,cap_checkpoint_restore; no new privileges$" "$TMP/collector.log" &&
	ok "it says which capabilities it kept" || fail "no word of the capabilities kept"

# the profiles: named by the node; the burners with their labels and frames
ls "$B/out" > "$TMP/files"
n=$(grep -c "^ctxprof-$NODE-[0-9]\{8\}T[0-9]\{6\}Z\(-[0-9]*\)\?\.pb\.gz$" "$TMP/files")
[ "$n" -ge 3 ] && [ "$n" -eq "$(wc -l < "$TMP/files")" ] && ok "$n profiles, each named ctxprof-$NODE-<time>.pb.gz" ||
	fail "profile names: $(tr '\n' ' ' < "$TMP/files")"
"$PPROF" -traces "$B"/out/*.pb.gz > "$TMP/traces" 2> /dev/null || fail "pprof -traces failed"
# "pid comm node pod namespace container | frames" per trace block
awk '
	function flush() { if (pid != "") print pid, comm, node, pod, ns, ctr, "|" frames; pid = comm = node = pod = ns = ctr = frames = "" }
	/^-+[+]-+$/ { flush(); next }
	$1 == "pid:" { pid = $2; next }
	$1 == "comm:" { comm = $2; next }
	$1 == "node:" { node = $2; next }
	$1 == "pod:" { pod = $2; next }
	$1 == "namespace:" { ns = $2; next }
	$1 == "container:" { ctr = $2; next }
	pid != "" && NF { frames = frames " " $NF }
	END { flush() }' "$TMP/traces" > "$TMP/rows"
grep "^$shares " "$TMP/rows" > "$TMP/shares" || true
grep -q "^$shares shares $NODE burner-pod ctxprof-test burner |.* leaf_[a-z]* stage_[a-z]* run_cycle worker" "$TMP/shares" &&
	ok "shares (pid $shares): comm, node, pod, namespace and container labels; user frames leaf_ <- stage_ <- run_cycle <- worker named" ||
	fail "shares not found with its labels and frames: $(head -3 "$TMP/shares")"
awk '$2 ~ /^[Tt]$/ { print $3 }' /proc/kallsyms | sort -u > "$TMP/ksyms"
grep "^$dd " "$TMP/rows" | sed 's/.*|//' | tr ' ' '\n' | sort -u > "$TMP/dd_frames"
kn=$(comm -12 "$TMP/ksyms" "$TMP/dd_frames" | wc -l)
[ "$kn" -ge 2 ] && ok "dd (pid $dd): $kn distinct kernel functions named in its stacks ($(comm -12 "$TMP/ksyms" "$TMP/dd_frames" | head -4 | tr '\n' ' '))" ||
	fail "dd's kernel frames are not named: $(head -20 "$TMP/dd_frames" | tr '\n' ' ')"
grep -q "^$dd dd $NODE burner-pod ctxprof-test burner " "$TMP/rows" && ok "dd carries the same labels" ||
	fail "dd without its labels"

# pushed from the image, configured by the Secret
series="ctxprof-test/burner{pod=burner-pod,namespace=ctxprof-test,container=burner,node=$NODE}"
n=$(grep -l "\"name\": \"$series\"" "$TMP"/store/*.json 2> /dev/null | wc -l)
[ "$n" -ge 1 ] && "$PPROF" -raw "$(grep -l "\"name\": \"$series\"" "$TMP"/store/*.json | head -1 | sed 's/json$/pb/')" > /dev/null 2>&1 &&
	ok "--push-config: $n profiles of $series in the store, read by pprof" ||
	fail "--push-config: no profile of $series in the store: $(grep -h '^ctxprof: push' "$TMP/collector.log")"
finish
