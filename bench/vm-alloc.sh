#!/usr/bin/env bash
# Where the delivery path allocates: LayeredEcho's listener (layer b, or b' with LAYER=unsignaled) under JFR in one
# boot of the soft-RDMA VM (it/vm/rdma-vm), against the connector's client. Prints the client's result, the server's
# own figure (bytes its JVM allocated per echoed message over the timed part, in all and by thread), and JFR's
# allocation samples of the timed part alone (-Dlayered.jfr), by class and by site (JFR samples where a thread takes a
# new TLAB, weighted by the bytes since: over a few thousand messages the shares are rough, the totals are not).
# Usage: bench/vm-alloc.sh [SIZE [WINDOW [COUNT [WARMUP]]]]   (defaults 64 1 6000 2000)
# Environment: LAYER (connector or unsignaled, default connector), JVM_FLAGS, BENCH_JAVA_HOME (the JDK of both JVMs
# and of the jfr tool; default the java on the PATH), SKIP_BUILD.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-64}
window=${2:-1}
count=${3:-6000}
warmup=${4:-2000}
layer=${LAYER:-connector}
jvm_flags=${JVM_FLAGS:--Xmx256m -XX:+UseSerialGC}
cd "$root"
if [[ -z ${SKIP_BUILD:-} ]]; then
    mvn -q -B -pl bench -am package -DskipTests
fi
java=${BENCH_JAVA_HOME:+$BENCH_JAVA_HOME/bin/java}
java=$(readlink -f "${java:-$(command -v java)}")
share=$root/bench/target/vm-alloc
rm -rf "$share"
mkdir -p "$share"
cat >"$share/payload.sh" <<PAYLOAD
#!/bin/bash
set -u
cd "$share"
jvm() { timeout 200 "$java" $jvm_flags "\$@"; }
jvm -Dlayered.jfr=$share/server.jfr -cp "$root/bench/target/benchmarks.jar" \
    org.rdmaconnector.bench.LayeredEcho server $layer 18801 $size $window $count $warmup > server.txt 2>&1 &
for i in \$(seq 600); do grep -q '^listening' server.txt && break; sleep 0.1; done
jvm -cp "$root/bench/target/benchmarks.jar" org.rdmaconnector.bench.LayeredEcho client $layer 10.0.0.1 18801 \
    $size $window $count $warmup > client.txt 2>&1
wait
PAYLOAD
it/vm/rdma-vm run --quiet --share "$share" --timeout 900 -- /bin/bash "$share/payload.sh"
grep -h '^result' "$share/client.txt" || { echo "the client printed no result; see $share" >&2; exit 1; }
grep -h -A40 '^server allocated' "$share/server.txt" | grep -E '^(server allocated|  thread|  of which)' ||
    { echo "the server printed no figure; see $share" >&2; exit 1; }
"$(dirname "$java")/jfr" view --width 160 allocation-by-class "$share/server.jfr" | sed -n 1,20p
"$(dirname "$java")/jfr" view --width 160 allocation-by-site "$share/server.jfr" | sed -n 1,20p
