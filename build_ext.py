"""Builds the two cffi (out-of-line, API mode) extensions.

``safefs._native`` (safefs/fastpath.c): shims over openat2(2) and renameat2(2), and the core's
fast paths: a resolution beneath a root (openat2, or the walk in C), a whole-file read and a
whole atomic write of a small file, each one call that releases the GIL. (read_bytes calls the
same whole-file read through ``safefs._native_read``, a plain CPython extension that setup.py
builds from safefs/fastread.c, which compiles safefs/fastpath.c in.)
``safefs.sandbox._native``: Landlock's three system calls and the sandbox launcher, which does
everything between fork and exec in C (the agent has threads, so no Python may run there).

The Linux calls go through syscall(2) so the shims do not depend on the C library having
wrappers. Each function returns the result, or ``-errno`` on failure (or a ``SAFEFS_E*`` code), so
Python never reads a stale errno.
"""

from pathlib import Path

from cffi import FFI

ffibuilder = FFI()
_FASTPATH = Path(__file__).resolve().parent / "safefs" / "fastpath.c"

ffibuilder.cdef(
    """
    #define SAFEFS_EESCAPE ...
    #define SAFEFS_ENOTREGULAR ...
    #define SAFEFS_EMORE ...
    #define SAFEFS_EPOLICY ...
    #define SAFEFS_ETEMPEXISTS ...
    #define SAFEFS_ELINK ...
    #define SAFEFS_KEEP_MODE ...
    #define SAFEFS_KIND_OPENAT2 ...
    #define SAFEFS_KIND_WALK ...
    #define SAFEFS_BENEATH ...
    #define SAFEFS_NO_SYMLINKS ...
    #define SAFEFS_IN_ROOT ...
    #define SAFEFS_MAX_SYMLINKS ...
    #define SAFEFS_PATH_MAX ...
    #define SAFEFS_MAX_EAGAIN ...
    struct safefs_resolver {
        int kind;
        int symlinks;
        uint64_t resolve;
        uint64_t component_flags;
        uint64_t name_resolve;
    };
    struct safefs_read_out {
        int64_t fd;
        int64_t size;
        int64_t got;
    };
    long safefs_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                        uint64_t resolve);
    long safefs_renameat2(int olddirfd, const char *oldpath, int newdirfd,
                          const char *newpath, unsigned int flags);
    long safefs_open(const struct safefs_resolver *r, int root_fd, const char *path,
                     uint64_t flags, uint64_t mode, int follow);
    long safefs_read_fd(int fd, char *buf, size_t len);
    long safefs_magic_link(int dirfd, const char *target, size_t len);
    long safefs_read_file(const struct safefs_resolver *r, int root_fd, const char *path,
                          uint64_t flags, char *buf, size_t cap, struct safefs_read_out *out);
    long safefs_read_heads(const struct safefs_resolver *r, int root_fd,
                           const char *const *paths, size_t n, uint64_t flags, size_t size,
                           char *buf, size_t buflen, int64_t *lens, int64_t *offs);
    long safefs_write_named(int dirfd, const char *name, const char *token, const char *suffix,
                            const char *data, size_t len, int64_t perm, uint64_t mode,
                            int durable, uint64_t create_flags, uint64_t dir_flags);
    """
)
if _FASTPATH.exists():  # else ffibuilder has no source, and setup.py leaves it out
    ffibuilder.set_source("safefs._native", _FASTPATH.read_text())

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
        char **pinned;
        char **hidden;
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
        int ready_fd;
    };
    long sbx_spawn(struct sbx_spec *spec);
    long sbx_make_idmap_userns(int ondisk_uid, int ondisk_gid, int shown_uid, int shown_gid);
    long sbx_landlock_abi(void);
    long sbx_landlock_create_ruleset(uint64_t fs, uint64_t net, uint64_t scoped, int abi);
    long sbx_landlock_add_path(int ruleset_fd, int parent_fd, uint64_t access);
    long sbx_landlock_restrict_self(int ruleset_fd);
    long sbx_set_dumpable(int dumpable);
    long sbx_fanotify_init(unsigned int flags, unsigned int event_flags);
    long sbx_fanotify_mark(int group, unsigned int flags, uint64_t mask, int dirfd, const char *path);
    long sbx_open_by_handle(int mount_fd, const void *handle, int flags);
    long sbx_inotify_init(int flags);
    long sbx_inotify_add_watch(int fd, const char *path, uint32_t mask);
    long sbx_install_seccomp(const void *filter, unsigned short len);
    """
)
if _LAUNCHER.exists():  # else sandbox_ffibuilder has no source, and setup.py leaves it out
    sandbox_ffibuilder.set_source("safefs.sandbox._native", _LAUNCHER.read_text())

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
    sandbox_ffibuilder.compile(verbose=True)
