#!/usr/bin/env bash
# Java against C on the same Soft-RoCE device, in one boot of the soft-RDMA VM (it/vm/rdma-vm):
#  - event-mode ping-pong: rdma-core's `ibv_rc_pingpong -e` beside RcPingPong (rdma-native), same size and count;
#  - CM connect/disconnect loop: cm_connect_loop.c beside CmConnectLoop (rdma-native), the same steps.
# Prints messages/s, connections/s and the Java/C ratios (the VM slows both alike; the ratio is what counts).
# Usage: bench/vm-bench.sh [SIZE [ITERS [CONNECTIONS]]]   (defaults 4096 5000 200)
# Environment: WARMUP_ITERS, WARMUP_CONNECTIONS (untimed Java rounds for the JIT), JVM_FLAGS, PROFILE=1 (the Java
# ping-pong prints the time per verbs call).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-4096}
iters=${2:-5000}
connections=${3:-200}
warmup_iters=${WARMUP_ITERS:-$((iters / 2))}
warmup_connections=${WARMUP_CONNECTIONS:-$((connections / 4))}
jvm_flags=${JVM_FLAGS:--Xmx256m -XX:+UseSerialGC}
[[ -n ${PROFILE:-} ]] && jvm_flags="$jvm_flags -Drcpingpong.profile=true"

cd "$root"
mvn -q -B -pl bench -am package -DskipTests
share=$root/bench/target/vm-bench
rm -rf "$share"
mkdir -p "$share"
gcc -O2 -Wall -o "$share/cm_connect_loop" bench/src/main/c/cm_connect_loop.c -lrdmacm -libverbs
java=$(readlink -f "$(command -v java)")
cat >"$share/payload.sh" <<PAYLOAD
#!/bin/bash
set -u
cd "$share"
jvm() { "$java" $jvm_flags -cp "$root/bench/target/benchmarks.jar" "\$@"; }
echo "== C ping-pong"
ibv_rc_pingpong -d rxe0 -g 1 -e -s $size -n $iters -p 18515 > c-server.txt 2>&1 &
sleep 1
ibv_rc_pingpong -d rxe0 -g 1 -e -s $size -n $iters -p 18515 10.0.0.1 > c-client.txt 2>&1
wait
echo "== Java ping-pong"
jvm org.rdmaconnector.bench.RcPingPong server 18600 $size $iters $warmup_iters > java-server.txt 2>&1 &
sleep 4
jvm org.rdmaconnector.bench.RcPingPong client 10.0.0.1 18600 $size $iters $warmup_iters > java-client.txt 2>&1
wait
echo "== Java ping-pong, drain before re-arm"
jvm -Drcpingpong.drain=true org.rdmaconnector.bench.RcPingPong server 18601 $size $iters $warmup_iters > java-drain-server.txt 2>&1 &
sleep 4
jvm -Drcpingpong.drain=true org.rdmaconnector.bench.RcPingPong client 10.0.0.1 18601 $size $iters $warmup_iters > java-drain-client.txt 2>&1
wait
echo "== C cm loop"
./cm_connect_loop 10.0.0.1 18700 $connections > c-cm.txt 2>&1
echo "== Java cm loop"
jvm org.rdmaconnector.bench.CmConnectLoop 10.0.0.1 18701 $connections $warmup_connections > java-cm.txt 2>&1
tail -n 4 c-client.txt java-client.txt java-drain-client.txt c-cm.txt java-cm.txt
PAYLOAD
it/vm/rdma-vm run --quiet --share "$share" --timeout 1500 -- /bin/bash "$share/payload.sh"

usec() { sed -n 's/.* = \([0-9.]*\) usec\/iter/\1/p' "$1" | tail -1; }
rate() { sed -n 's/.* = \([0-9.]*\) connections\/s/\1/p' "$1" | tail -1; }
c_us=$(usec "$share/c-client.txt")
j_us=$(usec "$share/java-client.txt")
jd_us=$(usec "$share/java-drain-client.txt")
c_cm=$(rate "$share/c-cm.txt")
j_cm=$(rate "$share/java-cm.txt")
if [[ -z $c_us || -z $j_us || -z $jd_us || -z $c_cm || -z $j_cm ]]; then
    echo "a run printed no result; see $share/*.txt and $share/console.log" >&2
    exit 1
fi
awk -v cu="$c_us" -v ju="$j_us" -v jd="$jd_us" -v cc="$c_cm" -v jc="$j_cm" -v s="$size" -v n="$iters" -v k="$connections" 'BEGIN {
    printf "ping-pong, %d bytes, %d exchanges (client side):\n", s, n
    printf "  C    ibv_rc_pingpong -e  %10.1f exchanges/s (%.2f usec/iter)\n", 1e6 / cu, cu
    printf "  Java RcPingPong          %10.1f exchanges/s (%.2f usec/iter)\n", 1e6 / ju, ju
    printf "  Java/C                   %10.2f\n", cu / ju
    printf "  Java, drain then re-arm  %10.1f exchanges/s (%.2f usec/iter)\n", 1e6 / jd, jd
    printf "  Java/C                   %10.2f\n", cu / jd
    printf "CM connect/disconnect, %d connections:\n", k
    printf "  C    cm_connect_loop     %10.1f connections/s\n", cc
    printf "  Java CmConnectLoop       %10.1f connections/s\n", jc
    printf "  Java/C                   %10.2f\n", jc / cc
}'
