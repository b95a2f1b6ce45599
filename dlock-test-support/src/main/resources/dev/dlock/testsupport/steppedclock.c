/*
 * dlock test support: a wall clock that a test can step, for a process started with this library in
 * LD_PRELOAD (see SteppedClock.java). It adds an offset in milliseconds, read from the file named by
 * DLOCK_CLOCK_OFFSET_FILE (re-read at most every 10 ms), to gettimeofday(), time() and
 * clock_gettime() of the real-time clocks; every other clock passes through untouched.
 *
 * It uses raw system calls only (no malloc, no dlsym, no stdio): Debian's redis-server links jemalloc,
 * which reads the clock while it initialises, and a preload that allocates there recurses (libfaketime
 * does, so it cannot run redis-server).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define REREAD_NANOS 10000000LL

static volatile long long offset_millis;
static volatile long long read_at_nanos = -1;

static long long monotonic_nanos(void) {
    struct timespec now;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

static long long offset(void) {
    long long now = monotonic_nanos();
    if (read_at_nanos >= 0 && now - read_at_nanos < REREAD_NANOS) {
        return offset_millis;
    }
    const char *path = getenv("DLOCK_CLOCK_OFFSET_FILE");
    if (path != NULL) {
        int fd = (int) syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
        if (fd >= 0) {
            char text[32];
            long n = syscall(SYS_read, fd, text, sizeof text - 1);
            syscall(SYS_close, fd);
            if (n > 0) {
                text[n] = 0;
                offset_millis = strtoll(text, NULL, 10);
            }
        }
    }
    read_at_nanos = now;
    return offset_millis;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    long result = syscall(SYS_clock_gettime, clock, ts);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
        long long nanos = ts->tv_sec * 1000000000LL + ts->tv_nsec + offset() * 1000000LL;
        ts->tv_sec = nanos / 1000000000LL;
        ts->tv_nsec = nanos % 1000000000LL;
    }
    return (int) result;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void) tz;
    struct timespec ts;
    int result = clock_gettime(CLOCK_REALTIME, &ts);
    if (result == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return result;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != NULL) {
        *out = ts.tv_sec;
    }
    return ts.tv_sec;
}
