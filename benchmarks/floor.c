/* The physical floor of a confined read: exactly the system calls safefs's reads make, and
 * nothing else (no Python, no checks), for benchmarks/bench_criteria.py to time beside them.
 *
 * floor_walk_read: the walk's calls for a file `ndirs` directories deep, as strace shows
 * safefs make them: one openat(O_PATH|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC) per directory, each
 * from the one before; openat of the file (O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC|O_NOCTTY);
 * the directories closed (one close_range where their numbers are consecutive, as the walk
 * does); fstat, read, close.
 * floor_openat2_read: one openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS), fstat, read, close.
 * Each returns the bytes read, or -errno.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FLOOR_MAX_DEPTH 64

struct floor_how {
    uint64_t flags, mode, resolve;
};

static long floor_read_fd(int fd, char *buf, size_t cap)
{
    struct stat st;
    long n;
    if (fstat(fd, &st) != 0) {
        n = -errno;
        close(fd);
        return n;
    }
    n = read(fd, buf, cap);
    if (n < 0)
        n = -errno;
    close(fd);
    return n;
}

long floor_walk_read(int root_fd, const char *const *dirs, int ndirs, const char *name, char *buf,
                     size_t cap)
{
    int fds[FLOOR_MAX_DEPTH];
    int cur = root_fd, fd, i, consecutive = 1;
    if (ndirs > FLOOR_MAX_DEPTH)
        return -E2BIG;
    for (i = 0; i < ndirs; i++) {
        fds[i] = openat(cur, dirs[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fds[i] < 0) {
            long err = -errno;
            while (i--)
                close(fds[i]);
            return err;
        }
        if (i && fds[i] != fds[i - 1] + 1)
            consecutive = 0;
        cur = fds[i];
    }
    fd = openat(cur, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (ndirs && consecutive)
        syscall(SYS_close_range, (unsigned)fds[0], (unsigned)fds[ndirs - 1], 0u);
    else
        for (i = 0; i < ndirs; i++)
            close(fds[i]);
    if (fd < 0)
        return -errno;
    return floor_read_fd(fd, buf, cap);
}

long floor_openat2_read(int root_fd, const char *path, char *buf, size_t cap)
{
    struct floor_how how;
    long fd;
    memset(&how, 0, sizeof how);
    how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    how.resolve = 0x08 | 0x02; /* RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS */
    fd = syscall(437 /* SYS_openat2 */, root_fd, path, &how, sizeof how);
    if (fd < 0)
        return -errno;
    return floor_read_fd((int)fd, buf, cap);
}
