/*
 * The C floor of NativeCallBenchmark: the same calls without Java and JNA, so the JNA share of a call can be told
 * apart from the cost of the call itself (the syscall, on this machine most of it). Not built by Maven:
 *
 *   gcc -O2 -o /tmp/call_floor bench/src/main/c/call_floor.c -libverbs && /tmp/call_floor
 */
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void) {
    volatile int status = IBV_WC_WR_FLUSH_ERR;
    volatile uintptr_t sink = 0;
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
        perror("eventfd");
        return 1;
    }
    const long calls = 20000000, syscalls = 2000000;
    for (int round = 0; round < 5; round++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++) {
            sink += (uintptr_t) ibv_wc_status_str(status);
        }
        double t1 = now_ns();
        for (long i = 0; i < syscalls; i++) {
            sink += fcntl(fd, F_GETFL, 0);
        }
        double t2 = now_ns();
        uint64_t one = 1, value;
        for (long i = 0; i < syscalls; i++) {
            if (write(fd, &one, 8) != 8 || read(fd, &value, 8) != 8) {
                perror("eventfd write/read");
                return 1;
            }
        }
        double t3 = now_ns();
        printf("ibv_wc_status_str %.1f ns   fcntl(F_GETFL) %.1f ns   eventfd write+read %.1f ns\n",
               (t1 - t0) / calls, (t2 - t1) / syscalls, (t3 - t2) / syscalls);
    }
    close(fd);
    return 0;
}
