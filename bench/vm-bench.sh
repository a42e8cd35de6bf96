#!/usr/bin/env bash
# Java against C on the same Soft-RoCE device, in one boot of the soft-RDMA VM (it/vm/rdma-vm):
#  - event-mode ping-pong: rdma-core's `ibv_rc_pingpong -e` beside RcPingPong (rdma-native), same size and count,
#    in the C tool's loop and in the event engine's (drain, busy-poll, re-arm) with three busy-poll budgets;
#  - the layered echo (LayeredEcho): 64 B and 4 KiB messages, one at a time and 16 outstanding, through raw verbs
#    (a), through the connector's client and hub listener (b; and b', the listener echoing unsignaled), through the
#    same client against an OSGi whiteboard listener in Felix (c, it/felix's FelixEchoServer), and against WildFly's
#    MDBs (d: the example's echo service, the rar and rdma-example.war deployed in one server boot for the four
#    runs, by it/vm/appserver.sh): messages/s, p50/p99, CPU, server bytes/message (not for WildFly); (a) and (b)
#    once more with both sides busy-polling for the VM-scaled budget (raw-vm, connector-vm), since at the default
#    50 us the emulated round trip outlasts every poll;
#  - CM connect/disconnect loop: cm_connect_loop.c beside CmConnectLoop (rdma-native), the same steps, in turn for
#    three rounds, each after the same untimed connections; the Java loop twice, blocking in rdma_get_cm_event as C
#    does, and polling the non-blocking channel for the VM-scaled budget before it sleeps (-Dcmloop.busyPollMicros).
#  - then, in a second boot, bench/vm-perftest.sh: ib_read_lat, ib_write_lat, ib_write_bw and ib_send_bw (window 64)
#    beside ConnectorPerftest.
# Beside each layered run: how often rxe's requester retried in it (hw_counters/completer_retry_err: a
# retransmission timer that fired, or a sequence NAK), so that a run slowed by a lost packet shows as one.
# Prints messages/s, connections/s, the Java/C ratios (the VM slows both alike; the ratio is what counts), CPU time
# per exchange (C: the client process in all; Java: the client JVM over the timed part) and CQ events per exchange.
# Usage: bench/vm-bench.sh [SIZE [ITERS [CONNECTIONS]]]   (defaults 4096 5000 200)
# Environment: WARMUP_ITERS (untimed Java ping-pong exchanges, default 20000), WARMUP_CONNECTIONS (untimed
# connections of each CM loop, C's too; default 10000: methods called once per connection reach C2 after some
# thousands; the Java loop also waits for its JIT to go quiet twice near the warm-up's end), JVM_FLAGS, BENCH_JAVA_HOME (the
# JDK of the Java side; default the java on the PATH), PROFILE=1 (the Java
# ping-pong prints the time per verbs call), VM_BUSY_POLL_MICROS (the VM-scaled budget, default 2000: a round trip
# in the emulated VM takes about 1 ms, some 300 times one on hardware), LAYERED_WARMUP (untimed messages per layered
# run, default 20000) and LAYERED_COUNT (messages per layered run, the untimed included; default LAYERED_WARMUP +
# 3000), PIN (default 1: every server runs on vCPU 0 and every client on vCPU 1, C and Java alike; 0 lets the guest
# place them. Two spinning sides on one vCPU wait for each other's time slice: BENCHMARKS.md, "Where the stall tail
# comes from". The CM loop, one process, stays unpinned), PERFTEST (default 1; 0 leaves out the second boot). The
# warm-ups are long because under qemu's TCG the JIT compilers take much of the two emulated CPUs for tens of
# seconds: a timed part they still run in measures them (BENCHMARKS.md, "The JIT in the timed part"); each Java side
# prints how long its compilers worked in the timed part, and the ping-pong's and the layered echo's clients wait near
# their warm-up's end until their compilers (and the echo server's) are idle (BENCHMARKS.md, "Which threads run per
# message").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-4096}
iters=${2:-5000}
connections=${3:-200}
warmup_iters=${WARMUP_ITERS:-20000}
warmup_connections=${WARMUP_CONNECTIONS:-10000}
vm_busy_poll=${VM_BUSY_POLL_MICROS:-2000}
layered_warmup=${LAYERED_WARMUP:-20000}
layered_count=${LAYERED_COUNT:-$((layered_warmup + 3000))}
jvm_flags=${JVM_FLAGS:--Xmx256m -XX:+UseSerialGC}
# where the two sides run: taskset prefixes (none with PIN=0)
on_server="" on_client=""
if [[ ${PIN:-1} == 1 ]]; then
    on_server="taskset -c 0" on_client="taskset -c 1"
fi
[[ -n ${PROFILE:-} ]] && jvm_flags="$jvm_flags -Drcpingpong.profile=true"

cd "$root"
mvn -q -B -pl bench,it/felix,rar,example -am package -DskipTests
wildfly=$(it/vm/wildfly-home)
felix_version=$(sed -n 's|.*<felix.version>\(.*\)</felix.version>.*|\1|p' pom.xml)
felix_jar=$HOME/.m2/repository/org/apache/felix/org.apache.felix.framework/$felix_version/org.apache.felix.framework-$felix_version.jar
[[ -f $felix_jar ]] || { echo "no Felix framework $felix_version in the local Maven repository: $felix_jar" >&2; exit 1; }
share=$root/bench/target/vm-bench
rm -rf "$share"
mkdir -p "$share"
gcc -O2 -Wall -o "$share/cm_connect_loop" bench/src/main/c/cm_connect_loop.c -lrdmacm -libverbs
cp rar/target/rdma-connector-*.rar "$share/rdma-connector.rar"
cp example/target/rdma-example.war "$share/rdma-example.war"
# the JVM of the Java side: $BENCH_JAVA_HOME (e.g. a JDK 22+ for the FFM inline verbs), or the java on the PATH
java=${BENCH_JAVA_HOME:+$BENCH_JAVA_HOME/bin/java}
java=$(readlink -f "${java:-$(command -v java)}")
# layer (d): the connector's client against the example's echo MDB (port 7471), each size and window in turn while
# one WildFly runs: on the Java side's JDK with its whole JIT (appserver.sh --full-jit), each side pinned as in the
# other layers, so that (d)/(b) compares the layers, not two JDKs or compilers (BENCHMARKS.md, "Layer (d) on the
# same JDK")
wildfly_runs=""
for msg in 64 4096; do
    for window in 1 16; do
        wildfly_runs="$wildfly_runs --exec '$on_client timeout 300 $java $jvm_flags -cp $root/bench/target/benchmarks.jar"
        wildfly_runs="$wildfly_runs org.rdmaconnector.bench.LayeredEcho client connector 10.0.0.1 7471 $msg $window"
        wildfly_runs="$wildfly_runs $layered_count $layered_warmup' --out layered-wildfly-$msg-$window-client.txt"
    done
done
cat >"$share/payload.sh" <<PAYLOAD
#!/bin/bash
set -u
cd "$share"
# each JVM bounded: a client whose server died waits in ibv_get_cq_event for ever (RC has no keepalive)
# (pin="taskset ..." jvm ...: on that vCPU)
jvm() { \${pin:-} timeout 300 "$java" $jvm_flags -cp "$root/bench/target/benchmarks.jar" "\$@"; }
# layer (c)'s server: an embedded Felix with the build's bundles (it/felix's test classes)
felix_jvm() { \${pin:-} timeout 400 "$java" $jvm_flags -cp "$root/it/felix/target/test-classes:$felix_jar" "\$@"; }
echo "== C ping-pong"
$on_server timeout 120 ibv_rc_pingpong -d rxe0 -g 1 -e -s $size -n $iters -p 18515 > c-server.txt 2>&1 &
for i in \$(seq 100); do ss -ltn | grep -q ':18515 ' && break; sleep 0.1; done # the server's TCP exchange listens
TIMEFORMAT='%U %S'
{ time $on_client timeout 120 ibv_rc_pingpong -d rxe0 -g 1 -e -s $size -n $iters -p 18515 10.0.0.1 > c-client.txt 2>&1 ; } \
    2> c-client-cpu.txt
wait
# the Java client and server, in the C tool's loop (no flag) or the engine's (-Drcpingpong.busyPollMicros=N)
# A JVM under qemu's TCG dies now and then at freshly patched JIT code (see BENCHMARKS.md): a run without a result
# is tried once more, on the next port, and said so.
java_pp() {
    local name=\$1 port=\$2 try; shift 2
    for try in 1 2; do
        pin="$on_server" jvm "\$@" org.rdmaconnector.bench.RcPingPong server \$port $size $iters $warmup_iters > java-\$name-server.txt 2>&1 &
        sleep 4
        pin="$on_client" jvm "\$@" org.rdmaconnector.bench.RcPingPong client 10.0.0.1 \$port $size $iters $warmup_iters > java-\$name-client.txt 2>&1
        wait
        grep -q usec/iter java-\$name-client.txt && return
        echo "   \$name: no result (try \$try); server: \$(grep -m1 -E 'SIG|Exception' java-\$name-server.txt)"
        port=\$((port + 10))
    done
}
echo "== Java ping-pong, the C tool's loop"
java_pp loop 18600
echo "== Java ping-pong, drain then re-arm (busy poll 0)"
java_pp bp0 18601 -Drcpingpong.busyPollMicros=0
echo "== Java ping-pong, busy poll 50 us (the engine's default)"
java_pp bp50 18602 -Drcpingpong.busyPollMicros=50
echo "== Java ping-pong, busy poll $vm_busy_poll us (scaled to the VM's round trip)"
java_pp bpvm 18603 -Drcpingpong.busyPollMicros=$vm_busy_poll
# rxe's retries and RNR NAKs (rxe_counts, rxe_since)
source "$root/bench/rxe-counts.sh"
# the layered echo (LayeredEcho): the same workload through raw verbs (a) and through the connector (b); each run
# writes its retries and RNR NAKs ("R N") to layered-NAME-retries.txt
layered() {
    local layer=\$1 msg=\$2 window=\$3 port=\$4 try name=\$1-\$2-\$3 budget="" before
    if [[ \$layer == *-vm ]]; then # raw-vm, connector-vm: both sides busy-poll for the VM-scaled budget
        budget=-Dlayered.busyPollMicros=$vm_busy_poll
        layer=\${layer%-vm}
    fi
    for try in 1 2; do
        before=\$(rxe_counts)
        if [[ \$layer == felix ]]; then
            pin="$on_server" felix_jvm org.rdmaconnector.it.felix.FelixEchoServer \$port \$msg \$window $layered_count $layered_warmup > layered-\$name-server.txt 2>&1 &
            for i in \$(seq 600); do grep -q '^listening' layered-\$name-server.txt && break; sleep 0.1; done
        else
            pin="$on_server" jvm \$budget org.rdmaconnector.bench.LayeredEcho server \$layer \$port \$msg \$window $layered_count $layered_warmup > layered-\$name-server.txt 2>&1 &
            sleep 4
        fi
        pin="$on_client" jvm \$budget org.rdmaconnector.bench.LayeredEcho client \$layer 10.0.0.1 \$port \$msg \$window $layered_count $layered_warmup > layered-\$name-client.txt 2>&1
        wait
        rxe_since "\$before" > layered-\$name-retries.txt
        grep -q '^result' layered-\$name-client.txt && return
        echo "   layered \$name: no result (try \$try); server: \$(grep -m1 -E 'SIG|Exception' layered-\$name-server.txt)"
        port=\$((port + 10))
    done
}
port=18800
for msg in 64 4096; do
    for window in 1 16; do
        for layer in raw connector unsignaled felix raw-vm connector-vm; do
            port=\$((port + 1))
            echo "== layered echo: \$layer, \$msg bytes, window \$window"
            layered \$layer \$msg \$window \$port
        done
    done
done
echo "== layered echo: wildfly (the example's echo MDB), both sizes and windows in one server boot"
JAVA_HOME="${java%/bin/java}" $on_server bash "$root/it/vm/appserver.sh" --server-home "$wildfly" \
    --config standalone-full.xml --fail-on-warn --trim --no-verify --full-jit --quiet-server --timeout 1500 \
    --base-dir "$share/wildfly-base" \
    --deploy "$share/rdma-connector.rar" "$share/rdma-example.war" $wildfly_runs > wildfly.txt 2>&1 ||
    echo "   wildfly: appserver.sh failed: \$(tail -n 5 wildfly.txt)"
for round in 1 2 3; do
    echo "== CM loop, round \$round: C, then Java blocking in rdma_get_cm_event as C does, then Java polling"
    timeout 300 ./cm_connect_loop 10.0.0.1 \$((18700 + 2 * round)) $connections $warmup_connections \
        > c-cm-\$round.txt 2>&1
    jvm org.rdmaconnector.bench.CmConnectLoop 10.0.0.1 \$((18701 + 2 * round)) $connections $warmup_connections \
        > java-cm-\$round.txt 2>&1
    jvm -Dcmloop.busyPollMicros=$vm_busy_poll org.rdmaconnector.bench.CmConnectLoop 10.0.0.1 \$((18750 + round)) \
        $connections $warmup_connections > java-cm-bpvm-\$round.txt 2>&1
done
tail -n 6 c-client.txt c-client-cpu.txt java-*-client.txt c-cm-*.txt java-cm-*.txt
grep -h -E '^result|^server allocated' layered-*.txt
PAYLOAD
it/vm/rdma-vm run --quiet --share "$share" --timeout 4800 -- /bin/bash "$share/payload.sh"

usec() { sed -n 's/.* = \([0-9.]*\) usec\/iter$/\1/p' "$1" | tail -1; }
cpu() { sed -n 's/^\([0-9.]*\) usec\/iter CPU.*/\1/p' "$1" | tail -1; }
events() { sed -n 's/.* = \([0-9.]*\) per exchange$/\1/p' "$1" | tail -1; }
rate() { sed -n 's/.* = \([0-9.]*\) connections\/s/\1/p' "$1" | tail -1; }
c_us=$(usec "$share/c-client.txt")
c_cpu=$(awk -v n="$iters" '{ printf "%.2f", ($1 + $2) * 1e6 / n }' "$share/c-client-cpu.txt")
# a run without a result (a JVM the emulated CPU crashed twice) is reported as "-", the others still are, and the
# script fails at its end
failed=0
# the CM loop's rounds: "C Java Java-polling" per round
cm_rounds=""
for round in 1 2 3; do
    c=$(rate "$share/c-cm-$round.txt"); j=$(rate "$share/java-cm-$round.txt")
    p=$(rate "$share/java-cm-bpvm-$round.txt")
    if [[ -z $c || -z $j || -z $p ]]; then
        echo "CM loop round $round printed no result; see $share/*-cm-*$round.txt" >&2
        failed=1 c=-1 j=-1 p=-1
    fi
    cm_rounds="$cm_rounds $c $j $p"
done
rows=""
for v in loop bp0 bp50 bpvm; do
    f=$share/java-$v-client.txt
    us=$(usec "$f"); c=$(cpu "$f"); e=$(events "$f")
    if [[ -z $us || -z $c || -z $e ]]; then
        echo "the Java run $v printed no result; see $f and $share/console.log" >&2
        failed=1 us=-1 c=-1 e=-1
    fi
    rows="$rows $v $us $c $e"
done
layered=""
for msg in 64 4096; do
    for window in 1 16; do
        for layer in raw connector unsignaled felix wildfly raw-vm connector-vm; do
            c=$share/layered-$layer-$msg-$window-client.txt
            srv=$share/layered-$layer-$msg-$window-server.txt
            line=$(grep -m1 '^result' "$c" 2>/dev/null || true)
            # WildFly's allocation is not measured: -1, printed as "-"
            alloc=$([[ $layer == wildfly ]] && echo -1 ||
                sed -n 's/^server allocated \([0-9.]*\) B\/msg.*/\1/p' "$srv" | tail -1)
            if [[ -z $line || -z $alloc ]]; then
                echo "the layered run $layer $msg $window printed no result; see $c, $srv and $share/console.log" >&2
                failed=1
                layered="$layered $layer $msg $window -1 -1 -1 -1 -1 -1"
                continue
            fi
            # result layer=L size=S window=W messages=N msgs/s=R p50=A p99=B cpu=C (L: the client's, connector for d)
            # rxe's retries in the run (WildFly's four runs share one boot: not counted, -1)
            { read -r retried _ < "$share/layered-$layer-$msg-$window-retries.txt"; } 2>/dev/null || retried=-1
            layered="$layered $layer $(echo "$line" | sed 's/[a-z0-9/]*=//g' | awk '{print $3, $4, $6, $7, $8, $9}') $alloc $retried"
        done
    done
done
if [[ -z $c_us || -z $c_cpu ]]; then
    echo "the C ping-pong printed no result; see $share/c-*.txt and $share/console.log" >&2
    exit 1
fi
awk -v cu="$c_us" -v cc="$c_cpu" -v cm="$cm_rounds" -v s="$size" -v n="$iters" -v k="$connections" \
    -v kw="$warmup_connections" \
    -v vm="$vm_busy_poll" -v rows="$rows" -v layered="$layered" 'BEGIN {
    label["loop"] = "Java, rc_pingpong loop"; label["bp0"] = "Java, drain, re-arm (0 us)"
    label["bp50"] = "Java, busy poll 50 us"; label["bpvm"] = "Java, busy poll " vm " us"
    printf "ping-pong, %d bytes, %d exchanges (client side):\n", s, n
    printf "  %-30s %12s %8s %14s %12s\n", "", "exchanges/s", "Java/C", "CPU us/exch.", "CQ ev/exch."
    printf "  %-30s %12.1f %8s %14.1f %12s\n", "C ibv_rc_pingpong -e", 1e6 / cu, "", cc, "1 (strace)"
    m = split(rows, r, " ")
    for (i = 1; i <= m; i += 4) {
        if (r[i + 1] < 0) { printf "  %-30s %12s %8s %14s %12s\n", label[r[i]], "-", "-", "-", "-"; continue }
        printf "  %-30s %12.1f %8.2f %14.1f %12.2f\n", label[r[i]], 1e6 / r[i + 1], cu / r[i + 1], r[i + 2], r[i + 3]
    }
    printf "layered echo (%s):\n", "p50/p99: round trip in us; CPU: client JVM us/msg; alloc: server JVM B/msg; " \
        "retries: rxe requester retries in the run; -vm: both sides busy-poll " vm " us"
    printf "  %-6s %-7s %-12s %10s %9s %9s %8s %9s %7s %15s\n", "size", "window", "layer", "msgs/s", "p50", "p99", \
        "CPU", "alloc", "retries", "ratio"
    m = split(layered, l, " ")
    for (i = 1; i <= m; i += 9) {
        key = l[i + 1] "-" l[i + 2]
        if (l[i] == "raw") { rawrate[key] = l[i + 3] }
        if (l[i] == "connector") { connrate[key] = l[i + 3] }
        if (l[i] == "raw-vm") { rawvmrate[key] = l[i + 3] }
        ratio = l[i] == "connector" && rawrate[key] > 0 ? sprintf("(b)/(a) %.2f", l[i + 3] / rawrate[key]) \
            : l[i] == "unsignaled" && rawrate[key] > 0 ? sprintf("(b\047)/(a) %.2f", l[i + 3] / rawrate[key]) \
            : l[i] == "felix" && connrate[key] > 0 ? sprintf("(c)/(b) %.2f", l[i + 3] / connrate[key]) \
            : l[i] == "wildfly" && connrate[key] > 0 ? sprintf("(d)/(b) %.2f", l[i + 3] / connrate[key]) \
            : l[i] == "connector-vm" && rawvmrate[key] > 0 ? sprintf("(b)/(a) %.2f", l[i + 3] / rawvmrate[key]) : ""
        alloc = l[i + 7] < 0 ? "-" : sprintf("%.1f", l[i + 7])
        retried = l[i + 8] < 0 ? "-" : l[i + 8]
        if (l[i + 3] < 0) {
            printf "  %-6s %-7s %-12s %10s %9s %9s %8s %9s %7s %15s\n", l[i + 1], l[i + 2], l[i], "-", "-", "-", "-", \
                "-", retried, ""
            continue
        }
        printf "  %-6s %-7s %-12s %10.1f %9.1f %9.1f %8.1f %9s %7s %15s\n", l[i + 1], l[i + 2], l[i], l[i + 3], \
            l[i + 4], l[i + 5], l[i + 6], alloc, retried, ratio
    }
    printf "CM connect/disconnect, %d connections after %d untimed, C and Java in turn (connections/s; Java " \
        "blocking in rdma_get_cm_event as C does, then polling the non-blocking channel for %d us per wait):\n", \
        k, kw, vm
    printf "  %-8s %10s %10s %8s %14s %8s\n", "round", "C", "Java", "Java/C", "Java polling", "Java/C"
    m = split(cm, c, " ")
    valid = 0
    for (i = 1; i <= m; i += 3) {
        if (c[i] < 0) { printf "  %-8d %10s %10s %8s %14s %8s\n", (i + 2) / 3, "-", "-", "-", "-", "-"; continue }
        cmr[++valid] = c[i + 1] / c[i]
        cmp[valid] = c[i + 2] / c[i]
        printf "  %-8d %10.1f %10.1f %8.2f %14.1f %8.2f\n", (i + 2) / 3, c[i], c[i + 1], cmr[valid], c[i + 2], \
            cmp[valid]
    }
    if (valid > 0) {
        printf "  %-8s %10s %10s %8.2f %14s %8.2f\n", "median", "", "", median(cmr, valid), "", median(cmp, valid)
    }
}
# the median of a[1..n] (insertion sort: three at most)
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}'
# one-sided operations and 64 outstanding sends against perftest, in a boot of their own (bench/vm-perftest.sh)
if [[ ${PERFTEST:-1} == 1 ]]; then
    PIN=${PIN:-1} SKIP_BUILD=1 "$root/bench/vm-perftest.sh" "$size" "$iters" 64 || failed=1
fi
exit $failed
