#!/usr/bin/env bash
# One-sided operations and windowed sends, Java against C on the same Soft-RoCE device in one boot of the soft-RDMA
# VM (it/vm/rdma-vm): perftest's ib_read_lat, ib_write_lat, ib_write_bw and ib_send_bw beside ConnectorPerftest
# (rdma-native's connector API: a client channel set against a hub listener), the same sizes, counts and window.
# Each pair runs three times; prints every figure and the Java/C ratio of the medians (for latency: C's over Java's,
# so that 1.0 or more is as good as C either way). Before read_lat, read_post.c and RawRead (rdma-native's verbs, no
# connector) do the same READ one at a time, busy polling in the posting thread: how long the post takes, the round
# trip, and how often the READ was complete when the post returned. Beside each figure: how often rxe's requester
# retried in that run (hw_counters/completer_retry_err: a retransmission timer that fired, or a sequence NAK) and how
# many receiver-not-ready NAKs it had (rcvd_rnr_err: a send found no receive posted), so that a run slowed by a lost
# packet or a receive queue run dry shows as one.
# Usage: bench/vm-perftest.sh [SIZE [ITERS [WINDOW]]]   (defaults 4096 3000 64). Where the emulated CPU is slow, give
# the bandwidth tests ITERS 20000: 3000 timed sends last about a second there, and one retransmission timeout or C2
# compilation in them rules the figure (BENCHMARKS.md, "Where send_bw's time goes").
# Environment: WARMUP_ITERS (untimed Java operations first, default 60000: under qemu's TCG the JIT compilers take
# much of the two emulated CPUs for tens of seconds, see BENCHMARKS.md), JVM_FLAGS, REPEATS (default 3),
# BENCH_JAVA_HOME (the JDK of the Java side; default the java on the PATH), SIGNAL_EVERY (the Java bandwidth tests
# signal one request in this many, default 16; 1 signals each), BUSY_POLL_MICROS (the Java engines' busy-poll
# budgets, each run in turn in the same boot; also how long a thread awaiting a request polls the CQ itself; default
# "50 2000": the engine's default, and the VM-scaled budget of vm-bench.sh), BASELINE_JAR (the benchmarks.jar of
# another build, e.g. an earlier commit's: its Java side runs too, at the first budget, in the same boot, as "base"),
# TESTS (which of read_lat write_lat write_bw send_bw to run, default all; read_post runs with read_lat), PIN (default
# 1: every server on vCPU 0 and every client on vCPU 1, C and Java alike; 0 lets the guest place them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-4096}
iters=${2:-3000}
window=${3:-64}
warmup=${WARMUP_ITERS:-60000}
repeats=${REPEATS:-3}
jvm_flags=${JVM_FLAGS:--Xmx256m -XX:+UseSerialGC}
# where the two sides run: taskset prefixes (none with PIN=0)
on_server="" on_client=""
if [[ ${PIN:-1} == 1 ]]; then
    on_server="taskset -c 0" on_client="taskset -c 1"
fi
signal_every=${SIGNAL_EVERY:-16}
busy_polls=${BUSY_POLL_MICROS:-50 2000}
tests=${TESTS:-read_lat write_lat write_bw send_bw}
for t in $tests; do
    [[ $t =~ ^(read_lat|write_lat|write_bw|send_bw)$ ]] || { echo "TESTS: no test $t" >&2; exit 2; }
done
# the Java variants, LABEL:BUDGET:JAR each
variants=""
for bp in $busy_polls; do
    variants="$variants bp$bp:$bp:$root/bench/target/benchmarks.jar"
done
if [[ -n ${BASELINE_JAR:-} ]]; then
    [[ -f $BASELINE_JAR ]] || { echo "BASELINE_JAR $BASELINE_JAR is no file" >&2; exit 2; }
    variants="$variants base:${busy_polls%% *}:$(readlink -f "$BASELINE_JAR")"
fi

cd "$root"
if [[ -z ${SKIP_BUILD:-} ]]; then
    mvn -q -B -pl bench -am package -DskipTests
fi
share=$root/bench/target/vm-perftest
rm -rf "$share"
mkdir -p "$share"
gcc -O2 -Wall -o "$share/read_post" bench/src/main/c/read_post.c -lrdmacm -libverbs
# the JVM of the Java side: $BENCH_JAVA_HOME (e.g. a JDK 22+ for the FFM inline verbs), or the java on the PATH
java=${BENCH_JAVA_HOME:+$BENCH_JAVA_HOME/bin/java}
java=$(readlink -f "${java:-$(command -v java)}")
cat >"$share/payload.sh" <<PAYLOAD
#!/bin/bash
set -u
cd "$share"
# each process bounded: an RC client whose server died waits for ever
jvm() { local jar=\$1; shift; \${pin:-} timeout 300 "$java" $jvm_flags -Dperftest.signalEvery=$signal_every -cp "\$jar" "\$@"; }
port=19000
# rxe's retries and RNR NAKs (rxe_counts, rxe_since); each run writes how many it had to NAME-retries.txt
source "$root/bench/rxe-counts.sh"
# perftest: server, then the client once the server's TCP exchange listens
c_run() {
    local name=\$1 tool=\$2 before=\$(rxe_counts); shift 2
    port=\$((port + 1))
    $on_server timeout 120 \$tool -d rxe0 -x 1 -F -p \$port "\$@" > c-\$name-server.txt 2>&1 &
    for i in \$(seq 300); do ss -ltn | grep -q ":\$port " && break; sleep 0.1; done
    $on_client timeout 120 \$tool -d rxe0 -x 1 -F -p \$port "\$@" 10.0.0.1 > c-\$name-client.txt 2>&1
    wait
    rxe_since "\$before" > c-\$name-retries.txt
}
# read_post.c, then RawRead: the server, then the client once the server said it listens; the JVM tried twice
post_run() {
    local r=\$1 try
    port=\$((port + 1))
    $on_server timeout 120 ./read_post server 10.0.0.1 \$port $size $iters $warmup > c-read_post-\$r-server.txt 2>&1 &
    for i in \$(seq 300); do grep -q '^ready' c-read_post-\$r-server.txt && break; sleep 0.1; done
    $on_client timeout 120 ./read_post client 10.0.0.1 \$port $size $iters $warmup > c-read_post-\$r-client.txt 2>&1
    wait
    for try in 1 2; do
        port=\$((port + 1))
        pin="$on_server" jvm $root/bench/target/benchmarks.jar org.rdmaconnector.bench.RawRead server 10.0.0.1 \$port $size \
            $iters $warmup > java-read_post-\$r-server.txt 2>&1 &
        for i in \$(seq 600); do grep -q '^ready' java-read_post-\$r-server.txt && break; sleep 0.1; done
        pin="$on_client" jvm $root/bench/target/benchmarks.jar org.rdmaconnector.bench.RawRead client 10.0.0.1 \$port $size \
            $iters $warmup > java-read_post-\$r-client.txt 2>&1
        grep -q 'read_post:' java-read_post-\$r-client.txt || kill %1 2>/dev/null
        wait
        grep -q 'read_post:' java-read_post-\$r-client.txt && return
        echo "   read_post: no result (try \$try)"
    done
}
# ConnectorPerftest: the listener, then the client once the listener said so; a JVM under qemu's TCG dies now and
# then at freshly patched JIT code (BENCHMARKS.md): a run without a result is tried once more, and said so
java_run() {
    local name=\$1 test=\$2 budget=\$3 jar=\$4 try before
    for try in 1 2; do
        before=\$(rxe_counts)
        port=\$((port + 1))
        pin="$on_server" jvm \$jar -Dperftest.busyPollMicros=\$budget org.rdmaconnector.bench.ConnectorPerftest server \$port $size \
            > java-\$name-server.txt 2>&1 &
        for i in \$(seq 600); do grep -q '^listening' java-\$name-server.txt && break; sleep 0.1; done
        pin="$on_client" jvm \$jar -Dperftest.busyPollMicros=\$budget org.rdmaconnector.bench.ConnectorPerftest client 10.0.0.1 \$port \$test \
            $size $iters $warmup $window \
            > java-\$name-client.txt 2>&1
        wait
        rxe_since "\$before" > java-\$name-retries.txt
        grep -q '^result' java-\$name-client.txt && return
        echo "   \$name: no result (try \$try): \$(grep -m1 -E 'SIG|Exception' java-\$name-client.txt java-\$name-server.txt)"
    done
}
# each Java variant of one test and round
java_all() {
    local test=\$1 r=\$2 v label bp jar
    for v in $variants; do
        IFS=: read -r label bp jar <<< "\$v"
        java_run \$test-\$r-\$label \$test \$bp \$jar
    done
}
# perftest's tool and options of each test
c_test() {
    local test=\$1 r=\$2
    case \$test in
        read_lat) c_run read_lat-\$r ib_read_lat -s $size -n $iters ;;
        write_lat) c_run write_lat-\$r ib_write_lat -s $size -n $iters ;;
        write_bw) c_run write_bw-\$r ib_write_bw -s $size -n $iters -t $window ;;
        send_bw) c_run send_bw-\$r ib_send_bw -s $size -n $iters -t $window ;;
    esac
}
for r in \$(seq $repeats); do
    echo "== round \$r"
    for test in $tests; do
        [[ \$test == read_lat ]] && post_run \$r
        c_test \$test \$r
        java_all \$test \$r
    done
done
PAYLOAD
it/vm/rdma-vm run --quiet --share "$share" --timeout 4000 -- /bin/bash "$share/payload.sh"

# perftest's result line starts with the size; latency: t_typical is the 5th field, t_avg the 6th; bandwidth:
# MsgRate[Mpps] is the 5th
c_field() { awk -v s="$size" -v f="$2" '$1 == s && NF >= f { v = $f } END { print v }' "$1"; }
java_field() { sed -n "s|^result.* $2=\([0-9.]*\).*|\1|p" "$1" | tail -1; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
printf 'one-sided and windowed sends, %d bytes, %d iterations, window %d (Java signals 1 in %d), %d rounds (one boot):\n' \
    "$size" "$iters" "$window" "$signal_every" "$repeats"
printf '  %-10s %-12s %-26s %-26s %8s\n' test "busy poll" "C (perftest), each round" "Java (connector), each round" \
    "Java/C"
failed=0
# read_post's round trip, and its post and completions found right after it, of each round
post_re='.*read_post: post p50=\([0-9.]*\) us, round trip p50=\([0-9.]*\) us'
post_re="$post_re, complete after the post \([0-9]*\).*"
post_field() { sed -n "s|$post_re|\\$2|p" "$1"; }
# the time in the post and the READs complete after it, as P/N
post_and_complete() { echo "$(post_field "$1" 1)/$(post_field "$1" 3)"; }
if [[ " $tests " == *" read_lat "* ]]; then
    cs="" js="" cp="" jp=""
    for r in $(seq "$repeats"); do
        c=$(post_field "$share/c-read_post-$r-client.txt" 2) j=$(post_field "$share/java-read_post-$r-client.txt" 2)
        [[ -z $c || -z $j ]] && { echo "round $r of read_post printed no result; see $share" >&2; failed=1; }
        cs="$cs ${c:-}" js="$js ${j:-}"
        cp="$cp $(post_and_complete "$share/c-read_post-$r-client.txt")"
        jp="$jp $(post_and_complete "$share/java-read_post-$r-client.txt")"
    done
    cm=$(echo "$cs" | median) jm=$(echo "$js" | median)
    ratio=$(awk -v c="$cm" -v j="$jm" 'BEGIN { if (c == "" || j == "" || j == 0) print "-";
        else printf "%.2f", c / j }')
    printf '  %-10s %-12s %-26s %-26s %8s  (us, raw verbs: read_post.c, RawRead)\n' read_post - "$cs" "$js" "$ratio"
    printf '  %-10s %-12s %-26s %-26s %8s  (us in the post / READs complete after it, of %d)\n' "" "" "$cp" "$jp" "" \
        "$iters"
fi
for test in $tests; do
    for v in $variants; do
        IFS=: read -r label bp _ <<< "$v"
        cs="" js="" events="" jits="" retried="" rnr=""
        for r in $(seq "$repeats"); do
            c=$(c_field "$share/c-$test-$r-client.txt" 5)
            # "R N" of C and of Java: retries as R/R, RNR NAKs as N/N
            { read -r cr cn < "$share/c-$test-$r-retries.txt"; } 2>/dev/null || cr=- cn=-
            { read -r jr jn < "$share/java-$test-$r-$label-retries.txt"; } 2>/dev/null || jr=- jn=-
            retried="$retried ${cr:--}/${jr:--}" rnr="$rnr ${cn:--}/${jn:--}"
            events="$events $(java_field "$share/java-$test-$r-$label-client.txt" 'cqEvents/op')"
            jits="$jits $(java_field "$share/java-$test-$r-$label-client.txt" jit)"
            if [[ $test == *_lat ]]; then
                j=$(java_field "$share/java-$test-$r-$label-client.txt" typical)
            else
                j=$(java_field "$share/java-$test-$r-$label-client.txt" 'msgs/s')
                [[ -n $c ]] && c=$(awk -v m="$c" 'BEGIN { printf "%.1f", m * 1e6 }')
            fi
            [[ -z $c || -z $j ]] && { echo "round $r of $test ($label) printed no result; see $share" >&2; failed=1; }
            cs="$cs ${c:-}" js="$js ${j:-}"
        done
        cm=$(echo "$cs" | median) jm=$(echo "$js" | median)
        unit=$([[ $test == *_lat ]] && echo "us" || echo "msgs/s")
        ratio=$(awk -v t="$test" -v c="$cm" -v j="$jm" 'BEGIN { if (c == "" || j == "" || c == 0 || j == 0) print "-";
            else if (t ~ /_lat$/) printf "%.2f", c / j; else printf "%.2f", j / c }')
        printf '  %-10s %-12s %-26s %-26s %8s  (%s)\n' "$test" "$([[ $label == base ]] && echo "base, ")$bp us" \
            "$cs" "$js" "$ratio" "$unit"
        # the client's CQ events per operation, where that build prints them: each woke its event loop; and the ms
        # its JIT compilers worked in the timed part (under qemu's TCG they take the CPUs the benchmark needs)
        [[ -n ${events// /} ]] && printf '  %-10s %-12s %-26s %-26s\n' "" "" "" "CQ events/op:$events"
        [[ -n ${jits// /} ]] && printf '  %-10s %-12s %-26s %-26s\n' "" "" "" "JIT ms in the timed part:$jits"
        printf '  %-10s %-12s %-26s\n' "" "" "rxe retries, C/Java:$retried; RNR NAKs:$rnr"
    done
done
exit $failed
