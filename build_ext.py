"""Builds ``safefs._native``: a cffi (out-of-line, API mode) shim over openat2(2) and renameat2(2).

Both are called through syscall(2) so the shim does not depend on the C library having wrappers.
Each function returns the result, or ``-errno`` on failure, so Python never reads a stale errno.
"""

from cffi import FFI

ffibuilder = FFI()

ffibuilder.cdef(
    """
    long safefs_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                        uint64_t resolve);
    long safefs_renameat2(int olddirfd, const char *oldpath, int newdirfd,
                          const char *newpath, unsigned int flags);
    """
)

ffibuilder.set_source(
    "safefs._native",
    r"""
    #define _GNU_SOURCE
    #include <errno.h>
    #include <stdint.h>
    #include <unistd.h>
    #include <sys/syscall.h>

    #ifndef SYS_openat2
    #define SYS_openat2 437
    #endif

    struct safefs_open_how {
        uint64_t flags;
        uint64_t mode;
        uint64_t resolve;
    };

    static long safefs_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                               uint64_t resolve)
    {
        struct safefs_open_how how = { flags, mode, resolve };
        long r = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
        return r < 0 ? -errno : r;
    }

    static long safefs_renameat2(int olddirfd, const char *oldpath, int newdirfd,
                                 const char *newpath, unsigned int flags)
    {
    #ifdef SYS_renameat2
        long r = syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
        return r < 0 ? -errno : r;
    #else
        return -ENOSYS;
    #endif
    }
    """,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
