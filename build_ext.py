"""Builds the two cffi (out-of-line, API mode) extensions.

``safefs._native``: a shim over openat2(2) and renameat2(2).
``safefs.sandbox._native``: Landlock's three system calls and the sandbox launcher, which does
everything between fork and exec in C (the agent has threads, so no Python may run there).

Every call goes through syscall(2) so the shims do not depend on the C library having wrappers.
Each function returns the result, or ``-errno`` on failure, so Python never reads a stale errno.
"""

from pathlib import Path

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

sandbox_ffibuilder = FFI()
_LAUNCHER = Path(__file__).resolve().parent / "safefs" / "sandbox" / "launcher.c"
sandbox_ffibuilder.cdef(
    """
    struct sbx_spec {
        const char *exe;
        char **argv;
        char **envp;
        const char *workspace;
        int workspace_fd;
        int out_fd;
        int status_fd;
        int ruleset_fd;
        uint64_t proc_access;
        int clone_flags;
        int map_uid;
        int map_gid;
        int drop_uid;
        int drop_gid;
        int idmap_userns_fd;
        int mount_proc;
        const char *tmp_options;
        uint64_t tmp_access;
        char **read_only;
        const void *seccomp_filter;
        unsigned short seccomp_len;
        int new_session_keyring;
        uint64_t rlim_cpu;
        uint64_t rlim_as;
        uint64_t rlim_fsize;
        uint64_t rlim_nofile;
        uint64_t rlim_nproc;
        char *init_stack;
        size_t init_stack_size;
        int sync_fd;
    };
    long sbx_spawn(struct sbx_spec *spec);
    long sbx_make_idmap_userns(int ondisk_uid, int ondisk_gid, int shown_uid, int shown_gid);
    long sbx_landlock_abi(void);
    long sbx_landlock_create_ruleset(uint64_t fs, uint64_t net, uint64_t scoped, int abi);
    long sbx_landlock_add_path(int ruleset_fd, int parent_fd, uint64_t access);
    long sbx_landlock_restrict_self(int ruleset_fd);
    long sbx_set_dumpable(int dumpable);
    long sbx_install_seccomp(const void *filter, unsigned short len);
    """
)
if _LAUNCHER.exists():  # else sandbox_ffibuilder has no source, and setup.py leaves it out
    sandbox_ffibuilder.set_source("safefs.sandbox._native", _LAUNCHER.read_text())

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
    sandbox_ffibuilder.compile(verbose=True)
