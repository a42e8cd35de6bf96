#!/usr/bin/env bash
# appserver.sh: boot a WildFly server with some deployments, GET one or more URLs from it,
# save the response bodies, and shut it down cleanly. It is meant to run as the payload of a
# throw-away rdma-vm guest (Soft-RoCE, qemu TCG, no KVM); it works the same on the host,
# which is how the class archives for --cds are made (--cds-dump).
#
#   # optional, once per JDK + server + config, on the host (11-16 s; also a quick smoke test):
#   bash it/vm/appserver.sh --server-home "$WF" --trim --fail-on-warn --deploy x.rar app.war \
#       --url http://127.0.0.1:8080/app/ --out /dev/null --cds-dump "$SHARE/wf.jsa"
#   # in the guest (the payload starts in the share: give the script's absolute path):
#   it/vm/rdma-vm run --share "$SHARE" --mem 1G --timeout 900 -- bash "$PWD/it/vm/appserver.sh" \
#       --server-home "$WF" --trim --fail-on-warn --no-verify --cds "$SHARE/wf.jsa" \
#       --deploy x.rar app.war --url http://127.0.0.1:8080/app/run --out "$SHARE/result.txt"
#
# What it does: creates a small jboss.server.base.dir (default ./wildfly-base, i.e. in the
# share) holding only configuration/ (the chosen config + the .properties files), an empty
# deployments/ and log/; the server home stays read-only where it is (copying a 280 MB server
# over 9p took 120 s). data/ and tmp/ go to a tmpfs in the guest (--scratch). The config
# copy is optionally edited (--fail-on-warn, --trim) in one awk pass. Deployments are copied
# into deployments/ (.rar files first) and deployed by the deployment scanner as part of the
# boot; the script waits for one NAME.deployed/NAME.failed marker per deployment and for the
# "started" line (WFLYSRV0025, or 0026 = started with errors, a failure), GETs the URLs with
# busybox wget (no second JVM), sends SIGTERM (WildFly's clean shutdown) and waits for the
# JVM. Any failure (a .failed marker, boot errors, the JVM dying, an HTTP error, --timeout)
# stops the server and prints the markers and the server log tail.
#
# Why it is built like this -- measured in the guest (2 vCPUs on a shared 2-core host):
# - Every fork+exec costs 0.2-0.5 s of emulated CPU in the guest (grep ~0.5 s, /bin/true
#   ~0.2 s, sleep ~0.3 s; a bash subshell ~0.06 s). A wait loop with `grep; sleep 0.5` ate a
#   large share of the 2 vCPUs the server needs. So: waiting and log watching use only bash
#   builtins (`read` on an open fd of the console log, `read -t` on a pipe as sleep); the
#   whole setup is about six processes.
# - The JVM is started directly: bin/standalone.sh runs `java -version` three times first.
#   Flags are standalone.sh's JDK 9+ ones plus: small heap, -XX:+UseSerialGC,
#   -XX:TieredStopAtLevel=1 (C1 only; a C2-compiled JVM once crashed under TCG, and C2 does
#   not pay off in a run this short; --full-jit keeps C2 for long runs such as benchmarks),
#   jboss.as.management.blocking.timeout >= --timeout.
# - --cds: a class archive made on the host with --cds-dump (JDK 17: dynamic AppCDS, which
#   also covers classes of jboss-modules' class loaders; JDK 24+: the AOT cache). ~20-25% less
#   guest CPU. The archive is only valid for the same JDK build, server path and JVM flags;
#   a mismatch is ignored with a warning, not an error.
# - --no-verify skips bytecode verification of non-JDK classes; --trim drops 16 subsystems
#   (messaging, iiop, webservices, ...) that a resource adapter + MDB + servlet/JAX-RS/CDI
#   test does not use: 25% fewer classes loaded at boot.
# - The guest's `lo` is up (it/vm/init runs `ip link set lo up`); 127.0.0.1:8080 works. The
#   guest has no /dev/fd (nor /dev/std*), so no `<(...)` process substitution here.
# Measured (WildFly 39.0.1 standalone-full, JDK 17, a small servlet + JAX-RS war, --mem 1G;
# wall time of the whole `rdma-vm run`, the server's "started" line, guest CPU of the JVM):
#   no options                          133 s   started +115 s   182 CPU-s
#   --cds --no-verify                    95 s            +80 s   128 CPU-s
#   --cds --no-verify --trim          79-87 s         +65-74 s   98-112 CPU-s
#   same with Temurin 25 + AOT cache     77 s            +64 s   105 CPU-s
# on a host with load 1-2; the same run took 125-160 s at load 4. Peak guest memory use
# 375 MB with --trim, 495 MB without (server RSS 225/305 MB): --mem 1G is plenty.
#
# Exit codes: 0 all fine; 1 boot or deployment failure, HTTP error, the server died or did
# not stop; 2 usage; 124 --timeout reached. Give `rdma-vm run --timeout` at least
# --timeout + --stop-timeout + 30 s.
set -uo pipefail
shopt -s extglob

PROG=appserver.sh
T0=${EPOCHREALTIME/[.,]/}

usage() {
    cat <<'EOF'
usage: appserver.sh --server-home DIR --deploy FILE... --url URL --out FILE [options]

  --server-home DIR   WildFly installation (read-only is fine; only standalone/configuration
                      is copied)
  --deploy FILE...    archives (or exploded directories) to deploy; repeatable, takes every
                      following argument up to the next option. .rar files are copied into
                      deployments/ first, the rest in the given order.
  --url URL           URL to GET once everything is deployed (repeatable; pairs with --out)
  --exec CMD          a shell command to run once everything is deployed, in order with the
                      URLs (repeatable; pairs with --out, which gets its output)
  --out FILE          where to write the response body of the matching --url
  --config NAME       server config in standalone/configuration (default standalone-full.xml)
  --base-dir DIR      jboss.server.base.dir to create (default ./wildfly-base; its
                      configuration/, deployments/ and log/ are replaced if they exist)
  --scratch DIR       parent of the server's data/ and tmp/ (default: /tmp/wildfly-scratch.PID
                      in the rdma-vm guest, a tmpfs; BASE-DIR elsewhere)
  --timeout S         give up after S seconds in total (default 600); exit 124
  --stop-timeout S    seconds the server gets to stop after SIGTERM (default 60); then a
                      thread dump (SIGQUIT), SIGKILL, and the run fails
  --xmx SIZE          maximum heap (default 384m)
  --fail-on-warn      set fail-on-warn="true" in the jca subsystem's archive-validation
  --trim              drop the subsystems a resource adapter + MDB + servlet/JAX-RS/CDI test
                      does not use (TRIM below), their extensions and references to them
  --drop-subsystem N  drop subsystem N (its xmlns name, e.g. messaging-activemq); repeatable
  --property K=V      add -DK=V to the server (repeatable)
  --java-opt OPT      add a JVM option (repeatable)
  --cds FILE          use the class archive FILE if it exists (JDK 17: -XX:SharedArchiveFile,
                      JDK 24+: -XX:AOTCache)
  --cds-dump FILE     write a class archive of this run to FILE when the JVM exits (JDK 17:
                      -XX:ArchiveClassesAtExit, JDK 25+: -XX:AOTCacheOutput); run it on the
                      host with the same JDK, server path, config and options
  --no-verify         skip bytecode verification of non-JDK classes (trusts the jars)
  --full-jit          compile with C2 too (the default stops at C1, see below): for runs long
                      enough to pay it back, such as bench/vm-bench.sh's layer (d)
  --diag              before stopping, print the server's CPU seconds per thread group
                      (C1 compiler, VM Thread = serial GC, MSC/ServerService threads...)
  --quiet-server      do not echo the server's ERROR/WARN/boot/deploy lines
  -h, --help          this text

Exit codes: 0 success; 1 boot/deployment failure, HTTP error or server died; 2 usage error;
124 timeout.
EOF
}

# ------------------------------------------------------------------ helpers (no forks)

NOW_MS=0
now_ms() { local t=${EPOCHREALTIME/[.,]/}; NOW_MS=$(((t - T0) / 1000)); }
fmt_s() { printf -v "$1" '%d.%01d' $(($2 / 1000)) $(($2 % 1000 / 100)); }
# Progress lines carry the time since this script started and since the machine booted.
say() {
    local up="" _ s
    [[ -r /proc/uptime ]] && read -r up _ </proc/uptime
    now_ms
    fmt_s s "$NOW_MS"
    printf '[%s +%ss%s] %s\n' "$PROG" "$s" "${up:+ up ${up}s}" "$*"
}
die_usage() {
    echo "$PROG: $*" >&2
    echo "try: $PROG --help" >&2
    exit 2
}
# sleep without starting a program: read with a timeout from a pipe nobody writes to. The
# other end is a forked bash (no exec) that waits for our end to close; bash keeps coproc
# fds out of the commands it starts. Not `<(:)`: the guest has no /dev/fd.
# It ignores TERM and INT: a guest's timeout signals the whole process group, and a napper gone would make every nap
# return at once (stop_server's grace would then be no wait at all).
coproc NAPPER { trap '' TERM INT; read -r _; }
NAP_FD=${NAPPER[0]}
nap() { read -r -t "$1" -u "$NAP_FD" _; }
# Is the server process alive? Not `kill -0`: inside a trap handler bash does not reap the
# child, and kill -0 succeeds on a zombie.
alive() {
    local st
    read -r st 2>/dev/null <"/proc/$PID/stat" || return 1
    st=${st##*) }
    [[ ${st%% *} != Z ]]
}
abs_dir() { # $1 variable name, $2 existing directory
    local d
    d=$(cd "$2" 2>/dev/null && pwd) || return 1
    printf -v "$1" '%s' "$d"
}

# ------------------------------------------------------------------ trimming

# What --trim drops from standalone-full.xml. Kept: logging, ee, ee-security, naming, jca,
# resource-adapters, ejb3 (MDBs; with distributable-ejb and infinispan, which it refers to),
# transactions, undertow, io, elytron, weld, bean-validation, jaxrs, jmx, remoting, discovery,
# request-controller, security-manager, core-management, deployment-scanner.
TRIM=(messaging-activemq iiop-openjdk webservices jsf batch-jberet mail jdr pojo sar jpa
    datasources metrics health microprofile-config-smallrye microprofile-jwt-smallrye
    elytron-oidc-client)
# The extension module that goes with a dropped subsystem (datasources shares
# org.jboss.as.connector with jca, which stays).
extension_of() {
    case $1 in
    messaging-activemq) REPLY=org.wildfly.extension.messaging-activemq ;;
    iiop-openjdk) REPLY=org.wildfly.iiop-openjdk ;;
    batch-jberet) REPLY=org.wildfly.extension.batch.jberet ;;
    microprofile-config-smallrye) REPLY=org.wildfly.extension.microprofile.config-smallrye ;;
    microprofile-jwt-smallrye) REPLY=org.wildfly.extension.microprofile.jwt-smallrye ;;
    webservices | jsf | mail | jdr | pojo | sar | jpa) REPLY=org.jboss.as.$1 ;;
    metrics | health | elytron-oidc-client) REPLY=org.wildfly.extension.$1 ;;
    *) REPLY="" ;;
    esac
}
# One awk pass over the config ($1 -> $2, problems -> $3): drop the <subsystem> elements named in SUBS and the
# <extension>s in EXTS (space separated), the references other subsystems make to them
# (ee default-bindings, ejb3 <iiop>, the batch permission), and set archive-validation
# fail-on-warn if FOW=1. Exit 3 when a requested edit found nothing to change.
edit_config() {
    awk -v subs=" $SUBS " -v exts=" $EXTS " -v fow="$FOW" -v errf="$3" '
        function has(list, x) { return index(list, " " x " ") > 0 }
        skip { if ($0 ~ /<\/subsystem>/) skip = 0; next }
        /<extension module="/ {
            m = $0; sub(/.*module="/, "", m); sub(/".*/, "", m)
            if (has(exts, m)) next
        }
        /<subsystem xmlns="/ {
            ns = $0; sub(/.*xmlns="/, "", ns); sub(/".*/, "", ns)
            n = split(ns, p, ":"); name = p[n - 1]
            if (name == "community") name = p[n - 2]
            if (has(subs, name)) {
                dropped[name] = 1
                if ($0 !~ /\/>[ \t]*$/ && $0 !~ /<\/subsystem>/) skip = 1
                next
            }
        }
        /<default-bindings / {
            if (has(subs, "datasources")) sub(/ datasource="[^"]*"/, "")
            if (has(subs, "messaging-activemq")) sub(/ jms-connection-factory="[^"]*"/, "")
        }
        /<iiop enable-by-default=/ && has(subs, "iiop-openjdk") { next }
        /BatchPermission/ && has(subs, "batch-jberet") { next }
        /<archive-validation / && fow == 1 {
            if (sub(/fail-on-warn="[^"]*"/, "fail-on-warn=\"true\"")) fowdone = 1
        }
        { print }
        END {
            bad = 0
            n = split(subs, want, " ")
            for (i = 1; i <= n; i++) if (!(want[i] in dropped)) {
                print "no subsystem " want[i] " in the config" > errf; bad = 1
            }
            if (fow == 1 && !fowdone) {
                print "--fail-on-warn: no <archive-validation fail-on-warn=...>" > errf; bad = 1
            }
            exit bad ? 3 : 0
        }' "$1" >"$2"
}

# ------------------------------------------------------------------ arguments

SERVER_HOME="" CONFIG=standalone-full.xml BASE="" SCRATCH="" TIMEOUT=600 STOP_TIMEOUT=60 XMX=384m
FOW=0 CDS="" CDS_DUMP="" NO_VERIFY="" QUIET_SERVER="" DIAG="" FULL_JIT=""
DEPLOY=() URLS=() KINDS=() OUTS=() PROPS=() JOPTS=() DROP=()
while (($#)); do
    case $1 in
    --server-home) SERVER_HOME=${2:?--server-home needs a directory}; shift 2 ;;
    --config) CONFIG=${2:?--config needs a file name}; shift 2 ;;
    --base-dir) BASE=${2:?--base-dir needs a directory}; shift 2 ;;
    --scratch) SCRATCH=${2:?--scratch needs a directory}; shift 2 ;;
    --deploy)
        shift
        [[ $# -gt 0 && $1 != -* ]] || die_usage "--deploy needs at least one file"
        while [[ $# -gt 0 && $1 != -* ]]; do DEPLOY+=("$1"); shift; done
        ;;
    --url) URLS+=("${2:?--url needs a URL}"); KINDS+=(url); shift 2 ;;
    --exec) URLS+=("${2:?--exec needs a command}"); KINDS+=(exec); shift 2 ;;
    --out) OUTS+=("${2:?--out needs a file}"); shift 2 ;;
    --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
    --stop-timeout) STOP_TIMEOUT=${2:?--stop-timeout needs seconds}; shift 2 ;;
    --xmx) XMX=${2:?--xmx needs a size}; shift 2 ;;
    --fail-on-warn) FOW=1; shift ;;
    --trim) DROP+=("${TRIM[@]}"); shift ;;
    --drop-subsystem) DROP+=("${2:?--drop-subsystem needs a name}"); shift 2 ;;
    --property) PROPS+=("-D${2:?--property needs K=V}"); shift 2 ;;
    --java-opt) JOPTS+=("${2:?--java-opt needs an option}"); shift 2 ;;
    --cds) CDS=${2:?--cds needs a file}; shift 2 ;;
    --cds-dump) CDS_DUMP=${2:?--cds-dump needs a file}; shift 2 ;;
    --no-verify) NO_VERIFY=1; shift ;;
    --full-jit) FULL_JIT=1; shift ;;
    --quiet-server) QUIET_SERVER=1; shift ;;
    --diag) DIAG=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown argument: $1" ;;
    esac
done

[[ -n $SERVER_HOME ]] || die_usage "--server-home is required"
abs_dir SERVER_HOME "$SERVER_HOME" || die_usage "no such directory: $SERVER_HOME"
[[ -f $SERVER_HOME/jboss-modules.jar ]] || die_usage "$SERVER_HOME has no jboss-modules.jar"
SRC_CONF=$SERVER_HOME/standalone/configuration
[[ $CONFIG != */* && -f $SRC_CONF/$CONFIG ]] || die_usage "no $CONFIG in $SRC_CONF"
((${#DEPLOY[@]} > 0)) || die_usage "nothing to --deploy"
((${#URLS[@]} == ${#OUTS[@]})) || die_usage "every --url and --exec needs its --out (got ${#URLS[@]} and ${#OUTS[@]})"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die_usage "--timeout must be a positive integer"
[[ $STOP_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die_usage "--stop-timeout must be a positive integer"
for f in "${DEPLOY[@]}"; do
    [[ -e $f ]] || die_usage "no such deployment: $f"
done
[[ -z $CDS || -z $CDS_DUMP ]] || die_usage "--cds and --cds-dump exclude each other"

if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then
    JAVA=$JAVA_HOME/bin/java
    JDK=$JAVA_HOME
else
    JAVA=$(command -v java) || die_usage "no java on PATH and no JAVA_HOME"
    JDK=$(readlink -f "$JAVA") # one exec; the version is read from the JDK's release file
    JDK=${JDK%/bin/java}
fi
# The feature version without starting a JVM (that costs seconds in the guest).
JAVA_FEATURE=17
if [[ -r $JDK/release ]]; then
    while IFS= read -r line; do
        [[ $line =~ ^JAVA_VERSION=\"([0-9]+) ]] && { JAVA_FEATURE=${BASH_REMATCH[1]}; break; }
    done <"$JDK/release"
fi
# busybox-static is a dependency of rdma-vm; curl or wget may be missing on the host root.
if command -v busybox >/dev/null; then
    WGET=(busybox wget)
elif command -v wget >/dev/null; then
    WGET=(wget)
else
    die_usage "neither busybox nor wget found"
fi

BASE=${BASE:-$PWD/wildfly-base}
if [[ -z $SCRATCH ]]; then
    SCRATCH=$BASE
    [[ -z ${RDMA_VM_GUEST:-} ]] || SCRATCH=/tmp/wildfly-scratch.$$
fi
LOG_DIR=$BASE/log
DEPLOY_DIR=$BASE/deployments
CONF_DIR=$BASE/configuration

# ------------------------------------------------------------------ base dir (few processes)

# A fresh base every time: stale markers or data from an earlier run would make the wait
# below meaningless.
rm -rf "$CONF_DIR" "$DEPLOY_DIR" "$LOG_DIR" "$BASE/data" "$BASE/tmp" "$SCRATCH/data" "$SCRATCH/tmp"
mkdir -p "$CONF_DIR" "$DEPLOY_DIR" "$LOG_DIR" "$SCRATCH/data" "$SCRATCH/tmp" ||
    die_usage "cannot create $BASE or $SCRATCH"
abs_dir BASE "$BASE" && abs_dir SCRATCH "$SCRATCH" || exit 1
LOG_DIR=$BASE/log DEPLOY_DIR=$BASE/deployments CONF_DIR=$BASE/configuration
CONSOLE=$LOG_DIR/console.log
SERVER_LOG=$LOG_DIR/server.log
say "java $JAVA_FEATURE: $JAVA; server: $SERVER_HOME; config: $CONFIG; base: $BASE; scratch: $SCRATCH"

# The users/roles files and logging.properties (boot logging); the config itself is copied
# unless it gets edited on the way.
SUBS=" ${DROP[*]} " EXTS=""
SUBS=${SUBS//+( )/ }
for n in "${DROP[@]}"; do
    extension_of "$n"
    EXTS+=" $REPLY"
done
if [[ $FOW == 1 || -n ${SUBS// /} ]]; then
    cp "$SRC_CONF"/*.properties "$CONF_DIR/" || exit 1
    if ! edit_config "$SRC_CONF/$CONFIG" "$CONF_DIR/$CONFIG" "$CONF_DIR/edit-errors"; then
        while IFS= read -r line; do echo "$PROG: $line" >&2; done <"$CONF_DIR/edit-errors"
        exit 1
    fi
    [[ -z ${SUBS// /} ]] || say "dropped subsystems:$SUBS"
    [[ $FOW == 0 ]] || say "archive validation: fail-on-warn=true"
else
    cp "$SRC_CONF"/*.properties "$SRC_CONF/$CONFIG" "$CONF_DIR/" || exit 1
fi

# The .rar files first, then the rest in the given order, in one cp. The scanner deploys all
# it finds at boot in one go; what orders the services are the dependencies between the
# deployments (Dependencies: deployment.x.rar, the MDB's resource-adapter binding).
NAMES=() SRCS=()
for pass in rar other; do
    for f in "${DEPLOY[@]}"; do
        f=${f%/}
        is_rar=other
        [[ $f != *.rar ]] || is_rar=rar
        [[ $is_rar == "$pass" ]] || continue
        SRCS+=("$f")
        NAMES+=("${f##*/}")
    done
done
cp -r "${SRCS[@]}" "$DEPLOY_DIR/" || exit 1
for n in "${NAMES[@]}"; do
    # An exploded deployment needs a marker to be deployed.
    [[ ! -d $DEPLOY_DIR/$n ]] || : >"$DEPLOY_DIR/$n.dodeploy"
done
say "deployments: ${NAMES[*]}"

# ------------------------------------------------------------------ JVM

JVM=(-D"[Standalone]" -Xms64m "-Xmx$XMX" -XX:+UseSerialGC
    -XX:MaxMetaspaceSize=256m -XX:+ExitOnOutOfMemoryError -XX:-UsePerfData
    -Djava.net.preferIPv4Stack=true -Djava.awt.headless=true
    -Djboss.modules.system.pkgs=org.jboss.byteman
    "-Djdk.serialFilter=maxbytes=10485760;maxdepth=128;maxarray=100000;maxrefs=300000"
    # bin/common.sh's DEFAULT_MODULAR_JVM_OPTIONS for JDK 9+.
    --add-exports=java.desktop/sun.awt=ALL-UNNAMED
    --add-exports=java.naming/com.sun.jndi.ldap=ALL-UNNAMED
    --add-exports=java.naming/com.sun.jndi.url.ldap=ALL-UNNAMED
    --add-exports=java.naming/com.sun.jndi.url.ldaps=ALL-UNNAMED
    --add-exports=jdk.naming.dns/com.sun.jndi.dns=ALL-UNNAMED
    --add-opens=java.base/java.lang=ALL-UNNAMED
    --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
    --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens=java.base/java.io=ALL-UNNAMED
    --add-opens=java.base/java.net=ALL-UNNAMED
    --add-opens=java.base/java.security=ALL-UNNAMED
    --add-opens=java.base/java.util=ALL-UNNAMED
    --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
    --add-opens=java.management/javax.management=ALL-UNNAMED
    --add-opens=java.naming/javax.naming=ALL-UNNAMED)
[[ -n $FULL_JIT ]] || JVM+=(-XX:TieredStopAtLevel=1)
# JDK 24+ warns on every start that WildFly's security manager code uses sun.misc.Unsafe.
((JAVA_FEATURE < 24)) || JVM+=(--sun-misc-unsafe-memory-access=allow)
# JDK 22+: the rar's inline verbs are FFM downcalls there, which warn once without it.
((JAVA_FEATURE < 22)) || JVM+=(--enable-native-access=ALL-UNNAMED)
if [[ -n $CDS ]]; then
    if [[ ! -f $CDS ]]; then
        say "no class archive at $CDS, starting without"
    elif ((JAVA_FEATURE >= 24)); then
        # A cache that does not match this JDK, its flags or the class path is ignored
        # with a warning on the console instead of failing the run.
        JVM+=("-XX:AOTCache=$CDS" "-Xlog:aot=warning,cds=warning")
    else
        JVM+=("-XX:SharedArchiveFile=$CDS" "-Xlog:cds=warning,cds+dynamic=warning")
    fi
fi
if [[ -n $CDS_DUMP ]]; then
    rm -f "$CDS_DUMP"
    if ((JAVA_FEATURE >= 25)); then
        JVM+=("-XX:AOTCacheOutput=$CDS_DUMP")
    else
        JVM+=("-XX:ArchiveClassesAtExit=$CDS_DUMP")
    fi
fi
# A diagnostic flag in JDK 17; the server's and the deployments' jars are trusted. Not when
# writing an archive: one dumped without verification is refused by a JVM that verifies.
if [[ -n $NO_VERIFY && -z $CDS_DUMP ]]; then
    JVM+=(-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote)
fi
JVM+=("${JOPTS[@]}")

SERVER_ARGS=(-Djboss.home.dir="$SERVER_HOME" -Djboss.server.base.dir="$BASE"
    -Djboss.server.log.dir="$LOG_DIR" -Djboss.server.data.dir="$SCRATCH/data"
    -Djboss.server.temp.dir="$SCRATCH/tmp"
    # The default (300 s per management operation, the boot included) is made for real
    # machines; under TCG on a busy host the boot alone can come close.
    -Djboss.as.management.blocking.timeout="$((TIMEOUT > 300 ? TIMEOUT : 300))"
    "${PROPS[@]}"
    # Read-only: the server never writes the config back.
    --read-only-server-config="$CONFIG")

: >"$CONSOLE"
what="heap $XMX"
[[ -z $CDS ]] || what+=", class archive"
[[ -z $CDS_DUMP ]] || what+=", writing a class archive"
[[ -z $NO_VERIFY || -n $CDS_DUMP ]] || what+=", no verify"
say "starting the server ($what)"
"$JAVA" "${JVM[@]}" \
    "-Dorg.jboss.boot.log.file=$SERVER_LOG" \
    "-Dlogging.configuration=file:$CONF_DIR/logging.properties" \
    -jar "$SERVER_HOME/jboss-modules.jar" -mp "$SERVER_HOME/modules" \
    org.jboss.as.standalone "${SERVER_ARGS[@]}" </dev/null >>"$CONSOLE" 2>&1 &
PID=$!

# ------------------------------------------------------------------ console (builtins only)

# The console log is read through an open fd with `read`: new complete lines each call, a
# trailing partial line is kept for the next one.
exec {CON_FD}<"$CONSOLE"
CON_PARTIAL="" CON_LINES=0 STARTED="" STOP_LINE=""
KEY_RE=' (ERROR|WARN|FATAL) |WFLYSRV00(49|25|26|10|27|28|50)|WFLYCTL0013|WFLYCTL0186|WFLYDS|Exception'
read_console() {
    local line
    while :; do
        if ! IFS= read -r line <&"$CON_FD"; then
            CON_PARTIAL+=$line
            return 0
        fi
        line=$CON_PARTIAL$line
        CON_PARTIAL=""
        CON_LINES=$((CON_LINES + 1))
        line=${line//$'\e['*([0-9;])m/}
        case $line in
        *WFLYSRV0025* | *WFLYSRV0026*) [[ -n $STARTED ]] || STARTED=$line ;;
        *WFLYSRV0050*) STOP_LINE=$line ;;
        esac
        if [[ -z $QUIET_SERVER && $line =~ $KEY_RE ]]; then
            [[ ! $line =~ ^[0-9:,]+\  ]] || line=${line#* }
            printf '  | %s\n' "$line"
        fi
    done
}

# ------------------------------------------------------------------ shutdown, failure

STOPPED="" SERVER_RC="" UNCLEAN=""
stop_server() {
    [[ -z $STOPPED ]] || return 0
    STOPPED=1
    if alive; then
        say "stopping the server (SIGTERM)"
        kill -TERM "$PID" 2>/dev/null
        local i
        # A clean stop takes seconds; writing a class archive (--cds-dump) a little longer.
        for ((i = 0; i < STOP_TIMEOUT * 2; i++)); do
            alive || break
            read_console
            nap 0.5
        done
        if alive; then
            UNCLEAN=1
            say "the server did not stop within ${STOP_TIMEOUT}s; thread dump (SIGQUIT) to $CONSOLE"
            print_diag
            kill -QUIT "$PID" 2>/dev/null
            # An emulated guest can take many seconds to write the dump: wait for its end (up to 30 s).
            for ((i = 0; i < 60; i++)); do
                grep -q '^JNI global refs' "$CONSOLE" 2>/dev/null && break
                nap 0.5
            done
            # HotSpot lists the newest threads first: the shutdown hook and what it waits for.
            sed -n '/^Full thread dump/,$p' "$CONSOLE" | sed -n 1,150p
            echo "---- the threads whose stacks name rdma-connector:"
            sed -n '/^Full thread dump/,$p' "$CONSOLE" | awk 'BEGIN { RS = "" } /rdmaconnector|rdma-/'
            echo "----"
            say "killing the server"
            kill -KILL "$PID" 2>/dev/null
        fi
    fi
    wait "$PID" 2>/dev/null
    SERVER_RC=$?
    read_console
    if [[ -n $UNCLEAN ]]; then
        say "server killed (java exit $SERVER_RC${STOP_LINE:+; it had logged WFLYSRV0050})"
    elif [[ -n $STOP_LINE ]]; then
        say "server stopped cleanly (java exit $SERVER_RC)"
    else
        say "server exited without WFLYSRV0050 (java exit $SERVER_RC)"
    fi
    [[ -z $CDS_DUMP || ! -f $CDS_DUMP ]] || say "class archive written: $CDS_DUMP"
}
trap 'stop_server; exit 143' TERM
trap 'stop_server; exit 130' INT

show_failure() {
    echo "$PROG: FAILED: $*" >&2
    local m
    for m in "$DEPLOY_DIR"/*.failed; do
        [[ -f $m ]] || continue
        echo "---- ${m##*/}:" >&2
        cat "$m" >&2
        echo >&2
    done
    local log=$SERVER_LOG
    [[ -s $log ]] || log=$CONSOLE
    echo "---- last 80 lines of $log:" >&2
    tail -n 80 "$log" >&2
    echo "----" >&2
}
FAIL_RC=1
fail() {
    stop_server
    show_failure "$@"
    report_memory
    exit "$FAIL_RC"
}

# Peak memory: the server's VmHWM and the lowest MemAvailable of the machine.
MIN_AVAIL="" HWM=""
sample_memory() {
    local k v _
    while read -r k v _; do
        if [[ $k == MemAvailable: ]]; then
            [[ -n $MIN_AVAIL && $MIN_AVAIL -le $v ]] || MIN_AVAIL=$v
            break
        fi
    done </proc/meminfo
    [[ -r /proc/$PID/status ]] || return 0
    while read -r k v _; do
        [[ $k == VmHWM: ]] && { HWM=$v; break; }
    done <"/proc/$PID/status"
}
report_memory() {
    local _k total _
    read -r _k total _ </proc/meminfo
    say "memory: server peak RSS ${HWM:-?} kB; machine MemTotal $total kB, lowest MemAvailable ${MIN_AVAIL:-?} kB (peak use $((total - ${MIN_AVAIL:-$total})) kB)"
}

# CPU seconds per thread of the server, grouped by thread name without trailing numbers
# (the kernel truncates names to 15 characters). Diagnostics only, so awk and sort are fine.
print_diag() {
    [[ -d /proc/$PID/task ]] || return 0
    say "diag: server CPU seconds by thread group (user+sys; USER_HZ=100):"
    local t stat
    for t in /proc/"$PID"/task/*; do
        read -r stat 2>/dev/null <"$t/stat" || continue
        # comm can contain spaces; after the closing ")": state is field 1, utime 12, stime 13.
        local comm=${stat#*\(} rest=${stat##*\) }
        comm=${comm%\)*}
        echo "${comm// /_} $rest"
    done | awk '{ n = $1; sub(/[-_]*[0-9]+$/, "", n); c = ($13 + $14) / 100
            cpu[n] += c; cnt[n]++; tot += c }
        END { for (n in cpu) if (cpu[n] >= 0.5) printf "    %8.1f s  %3d x  %s\n", cpu[n], cnt[n], n
            printf "    %8.1f s  live threads\n", tot }' | sort -rn
    read -r stat 2>/dev/null <"/proc/$PID/stat" || return 0
    local f
    read -r -a f <<<"${stat##*\) }"
    # The process' utime+stime include threads that have ended (the Controller Boot Thread).
    local t=$((f[11] + f[12]))
    printf "    %6d.%d s  process total (user %d s, sys %d s)\n" $((t / 100)) $((t % 100 / 10)) \
        $((f[11] / 100)) $((f[12] / 100))
}

# ------------------------------------------------------------------ wait

DEADLINE=$((SECONDS + TIMEOUT))
LAST_NOTE=$SECONDS BOOT_MS="" DEPLOYED_MS=""
while :; do
    read_console
    sample_memory
    if [[ -n $STARTED && -z $BOOT_MS ]]; then
        now_ms
        BOOT_MS=$NOW_MS
    fi
    pending=0 failed=()
    for n in "${NAMES[@]}"; do
        if [[ -e $DEPLOY_DIR/$n.failed ]]; then
            failed+=("$n")
        elif [[ ! -e $DEPLOY_DIR/$n.deployed ]]; then
            pending=$((pending + 1))
        fi
    done
    if ((pending == 0)) && [[ -z $DEPLOYED_MS ]]; then
        now_ms
        DEPLOYED_MS=$NOW_MS
    fi
    ((${#failed[@]} == 0)) || fail "deployment failed: ${failed[*]}"
    ((pending > 0)) || [[ -z $STARTED ]] || break
    alive || fail "the server process exited during boot"
    if ((SECONDS >= DEADLINE)); then
        FAIL_RC=124
        fail "timeout after ${TIMEOUT}s (started: ${STARTED:+yes}${STARTED:-no}, $pending deployment(s) pending)"
    fi
    if ((SECONDS - LAST_NOTE >= 20)); then
        LAST_NOTE=$SECONDS
        say "waiting: started=${STARTED:+yes}${STARTED:-no}, $pending of ${#NAMES[@]} deployment(s) pending, $CON_LINES console lines"
    fi
    nap 0.5
done
b="" d=""
fmt_s b "$BOOT_MS"
fmt_s d "$DEPLOYED_MS"
say "server up: started line at +${b}s, all deployed at +${d}s"
[[ $STARTED != *WFLYSRV0026* ]] || fail "the server started with errors: ${STARTED#* - }"

# ------------------------------------------------------------------ HTTP

RC=0
for i in "${!URLS[@]}"; do
    url=${URLS[i]} out=${OUTS[i]}
    left=$((DEADLINE - SECONDS))
    if ((left <= 0)); then
        FAIL_RC=124
        fail "timeout before GET $url"
    fi
    [[ $out != */* || -d ${out%/*} ]] || mkdir -p "${out%/*}"
    # written to a .part file, renamed once complete; a target that is no regular file (--out /dev/null) is written
    # directly: renamed onto, /dev/null would become a file for the whole machine
    part=$out.part
    [[ ! -e $out || -f $out ]] || part=$out
    if [[ ${KINDS[i]} == exec ]]; then
        # a command run while the server is up (e.g. a plain rdma-core client); its output is saved
        say "run: $url"
        timeout "$left" bash -c "$url" >"$part" 2>&1
        wrc=$?
        err=$(tail -5 "$part" 2>/dev/null)
        url="(command) $url"
    else
        say "GET $url"
        # -Y off: never a proxy, whatever the environment says.
        err=$(timeout "$left" "${WGET[@]}" -q -Y off -O "$part" "$url" 2>&1)
        wrc=$?
    fi
    sample_memory
    read_console
    if ((wrc != 0)); then
        # A failed command's output is kept (it says why); a failed GET has no body.
        if [[ $part != "$out" ]]; then
            if [[ ${KINDS[i]} == exec ]]; then mv "$part" "$out"; else rm -f "$part"; fi
        fi
        ((wrc != 124)) || FAIL_RC=124
        stop_server
        if [[ ${KINDS[i]} == exec ]]; then show_failure "$url: exit $wrc: $err"; else show_failure "GET $url: ${err:-wget exit $wrc}"; fi
        RC=$FAIL_RC
        break
    fi
    [[ $part == "$out" ]] || mv "$part" "$out"
    say "${url}: saved to $out"
done

[[ -z $DIAG ]] || print_diag
stop_server
if [[ -n $UNCLEAN && $RC == 0 ]]; then
    # The responses are saved, but a server (or resource adapter) that cannot stop is a bug.
    show_failure "the server did not stop within ${STOP_TIMEOUT}s after SIGTERM"
    RC=1
fi
report_memory
((RC != 0)) || say "OK"
exit "$RC"
