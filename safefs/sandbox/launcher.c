/* The sandbox launcher: everything between fork and exec, in C.
 *
 * The agent is multithreaded, so nothing may run in a forked child that could take a lock another
 * thread held at fork time: no malloc, no stdio, no Python. The children below make system calls
 * and touch only memory prepared by the parent.
 *
 * sbx_spawn() starts an "init" process in new namespaces (pid 1 of a new PID namespace). It
 * shares the caller's memory (CLONE_VM, as posix_spawn does) instead of copying it: a copy of a
 * large Python process costs milliseconds. So init touches only its own stack and the spec, runs
 * with every signal blocked (no handler of the caller's may run in it), makes credential changes
 * with raw system calls (the C library's would signal the caller's threads) and, once set up,
 * makes no call that can fail. Without CLONE_SETTLS it also shares the calling thread's
 * thread-local storage, errno included, so that thread waits (every signal blocked, so its poll
 * and read cannot be interrupted) until the command has been started: otherwise each could
 * overwrite the errno the other is about to read, and a setup step would report a wrong error
 * or none. init
 * writes the user namespace maps, makes its mounts (a fresh /proc, a size-limited tmpfs on /tmp,
 * the workspace nosuid and, for a dropped uid, idmapped, git's state read-only and the directories
 * above it pinned), then
 * starts the command (vfork-style, on a stack of its own) which sets rlimits, drops to the
 * unprivileged uid, joins a fresh session keyring, sets no-new-privs, enters the Landlock domain,
 * installs the seccomp filter and execs. init reports the command's wait status on the status pipe and
 * waits to be killed: killing pid 1 of a PID namespace kills every process in it, so nothing the
 * command started (setsid, set -m, double forks) survives.
 *
 * Status records (8 bytes): kind ('E' setup failed, 'X' the command exited), stage, 2 unused,
 * int32 value (errno for 'E', the wait status for 'X').
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#define SYS_move_mount 429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#define SBX_RESOLVE_NO_MAGICLINKS 0x02
#define SBX_RESOLVE_NO_SYMLINKS 0x04
#define SBX_RESOLVE_BENEATH 0x08
#define SBX_KEYCTL_JOIN_SESSION_KEYRING 1

#define SBX_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define SBX_LANDLOCK_RULE_PATH_BENEATH 1
#define SBX_OPEN_TREE_CLONE 1
#define SBX_AT_RECURSIVE 0x8000
#define SBX_MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#define SBX_MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#define SBX_MOUNT_ATTR_RDONLY 0x00000001
#define SBX_MOUNT_ATTR_NOSUID 0x00000002
#define SBX_MOUNT_ATTR_NODEV 0x00000004
#define SBX_MOUNT_ATTR_IDMAP 0x00100000
#define SBX_CLOSE_RANGE_CLOEXEC (1U << 2)

struct sbx_spec {
    const char *exe;
    char **argv;
    char **envp;
    const char *workspace;   /* its path now (NULL: no mount namespace work on it) */
    int workspace_fd;        /* what that path must still be (same device and inode) */
    int out_fd;              /* the command's stdout and stderr */
    int status_fd;           /* where init and the command write status records */
    int ruleset_fd;          /* Landlock ruleset, or -1 */
    uint64_t proc_access;    /* Landlock rights on the fresh /proc (0: none) */
    int clone_flags;         /* CLONE_NEW* */
    int map_uid, map_gid;    /* with CLONE_NEWUSER: the caller's ids, mapped to themselves */
    int drop_uid, drop_gid;  /* -1: keep */
    int idmap_userns_fd;     /* -1: the workspace is not idmapped */
    int mount_proc;
    const char *tmp_options; /* a fresh tmpfs on /tmp with these mount options (NULL: none) */
    uint64_t tmp_access;     /* Landlock rights on that tmpfs */
    char **read_only;        /* workspace-relative paths bound read-only (NULL-terminated) */
    char **pinned;           /* directories above them, bound onto themselves first (same) */
    char **hidden;           /* files covered by /dev/null, read-only and nodev: unopenable */
    const void *seccomp_filter; /* struct sock_filter[], assembled by safefs.sandbox.seccomp */
    unsigned short seccomp_len; /* its instructions (0: no filter) */
    int new_session_keyring; /* join a fresh, empty session keyring before exec */
    uint64_t rlim_cpu, rlim_as, rlim_fsize, rlim_nofile, rlim_nproc; /* 0: leave as is */
    char *init_stack;        /* owned by the caller, valid until init is reaped */
    size_t init_stack_size;
    int sync_fd;             /* set by sbx_spawn: init waits on it for its id maps */
    int ready_fd;            /* set by sbx_spawn: init writes a byte once the command is started */
};

struct sbx_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct sbx_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

struct sbx_mount_attr {
    uint64_t attr_set;
    uint64_t attr_clr;
    uint64_t propagation;
    uint64_t userns_fd;
};

enum {
    ST_USERNS_MAP = 1, ST_MOUNT_PRIVATE, ST_MOUNT_PROC, ST_OPEN_WORKSPACE, ST_WORKSPACE_MOVED,
    ST_IDMAP_WORKSPACE, ST_PROTECT_GIT, ST_LANDLOCK_PROC, ST_START_COMMAND, ST_RLIMIT,
    ST_DROP_GROUPS, ST_DROP_GID, ST_DROP_UID, ST_NO_NEW_PRIVS, ST_LANDLOCK, ST_STDIO, ST_CHDIR,
    ST_EXEC, ST_PDEATHSIG, ST_SECCOMP, ST_MOUNT_TMP, ST_LANDLOCK_TMP, ST_KEYRING,
};

#define COMMAND_STACK_SIZE (256 * 1024)

static long neg_errno(long r) { return r < 0 ? -errno : r; }

long sbx_landlock_abi(void)
{
    return neg_errno(syscall(SYS_landlock_create_ruleset, NULL, 0,
                             SBX_LANDLOCK_CREATE_RULESET_VERSION));
}

long sbx_landlock_create_ruleset(uint64_t fs, uint64_t net, uint64_t scoped, int abi)
{
    struct sbx_ruleset_attr attr = { fs, net, scoped };
    /* Older kernels know only a prefix of the struct: pass the size their ABI defines. */
    size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
    return neg_errno(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
}

long sbx_landlock_add_path(int ruleset_fd, int parent_fd, uint64_t access)
{
    struct sbx_path_beneath_attr rule = { access, parent_fd };
    return neg_errno(syscall(SYS_landlock_add_rule, ruleset_fd, SBX_LANDLOCK_RULE_PATH_BENEATH,
                             &rule, 0));
}

long sbx_landlock_restrict_self(int ruleset_fd)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    return neg_errno(syscall(SYS_landlock_restrict_self, ruleset_fd, 0));
}

/* The kernel's record of what changed in a filesystem (safefs.sandbox.changes): a notification
 * group reporting each event's directory by file handle, and the name in it. */
long sbx_fanotify_init(unsigned int flags, unsigned int event_flags)
{
    return neg_errno(fanotify_init(flags, event_flags));
}

long sbx_fanotify_mark(int group, unsigned int flags, uint64_t mask, int dirfd, const char *path)
{
    return neg_errno(fanotify_mark(group, flags, mask, dirfd, path));
}

/* The same record for an agent without CAP_SYS_ADMIN (safefs.sandbox.watch): an inotify
 * instance with a watch on each directory of the workspace. */
long sbx_inotify_init(int flags)
{
    return neg_errno(inotify_init1(flags));
}

long sbx_inotify_add_watch(int fd, const char *path, uint32_t mask)
{
    return neg_errno(inotify_add_watch(fd, path, mask));
}

/* A directory by its handle (bytes as the event carried them: a struct file_handle), opened
 * O_PATH on ``mount_fd``'s filesystem. */
long sbx_open_by_handle(int mount_fd, const void *handle, int flags)
{
    return neg_errno(open_by_handle_at(mount_fd, (struct file_handle *)handle, flags));
}

long sbx_set_dumpable(int dumpable)
{
    return neg_errno(prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0));
}

/* -- helpers for the children: system calls only -------------------------------------------- */

static void report(int fd, int kind, int stage, int value)
{
    unsigned char rec[8] = { (unsigned char)kind, (unsigned char)stage, 0, 0 };
    int32_t v = value;
    memcpy(rec + 4, &v, sizeof v);
    ssize_t ignored = write(fd, rec, sizeof rec);
    (void)ignored;
}

static void fail(int status_fd, int stage)
{
    report(status_fd, 'E', stage, errno);
    _exit(127);
}

static size_t put_uint(char *out, unsigned long v)
{
    char tmp[24];
    size_t n = 0, i;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* "inside outside 1\n" */
static size_t id_map_line(char *out, unsigned long inside, unsigned long outside)
{
    size_t n = put_uint(out, inside);
    out[n++] = ' ';
    n += put_uint(out + n, outside);
    memcpy(out + n, " 1\n", 3);
    return n + 3;
}

static int write_proc(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, data, len);
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)len ? 0 : -1;
}

static int write_id_maps(const char *dir, long uid_in, long uid_out, long gid_in, long gid_out,
                         int deny_setgroups)
{
    char path[64], line[64];
    size_t n = strlen(dir);
    if (n + 16 > sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n);
    if (deny_setgroups) {
        memcpy(path + n, "/setgroups", 11);
        if (write_proc(path, "deny", 4) < 0)
            return -1;
    }
    memcpy(path + n, "/uid_map", 9);
    if (write_proc(path, line, id_map_line(line, uid_in, uid_out)) < 0)
        return -1;
    memcpy(path + n, "/gid_map", 9);
    return write_proc(path, line, id_map_line(line, gid_in, gid_out));
}

/* Bind ``fd``'s file or directory onto itself with ``attr`` (0: just make it a mount point, so
 * it can be neither renamed nor replaced by a rename). */
static int bind_onto_itself(int fd, uint64_t attr)
{
    int tree = (int)syscall(SYS_open_tree, fd, "", SBX_OPEN_TREE_CLONE | AT_EMPTY_PATH | O_CLOEXEC);
    if (tree < 0)
        return -1;
    if (attr) {
        struct sbx_mount_attr ma = { attr, 0, 0, 0 };
        if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &ma, sizeof ma) < 0)
            goto fail;
    }
    if (syscall(SYS_move_mount, tree, "", fd, "",
                SBX_MOVE_MOUNT_F_EMPTY_PATH | SBX_MOVE_MOUNT_T_EMPTY_PATH) < 0)
        goto fail;
    close(tree);
    return 0;
fail: {
        int saved = errno;
        close(tree);
        errno = saved;
        return -1;
    }
}

struct sbx_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};

/* Each path (relative to the workspace, canonical: the caller resolved it) is bound onto itself
 * with ``attr`` (read-only for git's state, nothing more for the directories above it), which
 * also pins it: a mount point can be neither renamed, removed nor replaced, and a rename of a
 * directory above would carry the mounts below it along. The caller orders the paths parents
 * first: a bind copies only the mount it is made in, so a parent bound after its child would
 * hide the child's mount. No symlink is followed on the way, so what is bound is what the
 * caller named, or setup fails. */
static int bind_paths(int ws, char *const *paths, uint64_t attr)
{
    for (; paths && *paths; paths++) {
        struct sbx_open_how how = { O_PATH | O_NOFOLLOW | O_CLOEXEC, 0,
                                    SBX_RESOLVE_BENEATH | SBX_RESOLVE_NO_SYMLINKS |
                                        SBX_RESOLVE_NO_MAGICLINKS };
        int fd = (int)syscall(SYS_openat2, ws, *paths, &how, sizeof how);
        if (fd < 0)
            return -1;
        int r = bind_onto_itself(fd, attr);
        int saved = errno;
        close(fd);
        errno = saved;
        if (r < 0)
            return -1;
    }
    return 0;
}

/* Each file is covered by a read-only, nodev bind of /dev/null: a device node on a nodev mount
 * cannot be opened at all (EACCES), for reading or writing, and a mount point can be neither
 * renamed, removed nor replaced. */
static int cover_paths(int ws, char *const *paths)
{
    if (!paths || !*paths)
        return 0;
    int null = open("/dev/null", O_PATH | O_CLOEXEC);
    if (null < 0)
        return -1;
    int r = 0;
    for (; *paths && r == 0; paths++) {
        struct sbx_open_how how = { O_PATH | O_NOFOLLOW | O_CLOEXEC, 0,
                                    SBX_RESOLVE_BENEATH | SBX_RESOLVE_NO_SYMLINKS |
                                        SBX_RESOLVE_NO_MAGICLINKS };
        int fd = (int)syscall(SYS_openat2, ws, *paths, &how, sizeof how);
        if (fd < 0) {
            r = -1;
            break;
        }
        int tree = (int)syscall(SYS_open_tree, null, "",
                                SBX_OPEN_TREE_CLONE | AT_EMPTY_PATH | O_CLOEXEC);
        struct sbx_mount_attr ma = { SBX_MOUNT_ATTR_RDONLY | SBX_MOUNT_ATTR_NOSUID |
                                         SBX_MOUNT_ATTR_NODEV, 0, 0, 0 };
        if (tree < 0 ||
            syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &ma, sizeof ma) < 0 ||
            syscall(SYS_move_mount, tree, "", fd, "",
                    SBX_MOVE_MOUNT_F_EMPTY_PATH | SBX_MOVE_MOUNT_T_EMPTY_PATH) < 0)
            r = -1;
        int saved = errno;
        if (tree >= 0)
            close(tree);
        close(fd);
        errno = saved;
    }
    int saved = errno;
    close(null);
    errno = saved;
    return r;
}

/* mkdir -p of ``path`` (absolute), in whatever is mounted there now. */
static int make_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0)
            continue;
        char saved = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -1;
        buf[i] = saved;
    }
    return 0;
}

static int same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The workspace as this mount namespace sees it: its path must still name the directory the
 * caller holds. A clone of it is mounted at that path: nosuid and nodev always, idmapped (the
 * owner's ids shown as the dropped ones) for a dropped uid. The fresh tmpfs on /tmp is mounted
 * between the clone and its attachment: when the workspace lies under /tmp, its path is then
 * made inside the tmpfs, so it keeps its name. Returns the root of the clone. */
static int open_workspace(const struct sbx_spec *s)
{
    struct stat want, got;
    int fd = open(s->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        fail(s->status_fd, ST_OPEN_WORKSPACE);
    if (fstat(s->workspace_fd, &want) < 0 || fstat(fd, &got) < 0)
        fail(s->status_fd, ST_OPEN_WORKSPACE);
    if (!same_inode(&want, &got)) {
        errno = ESTALE;
        fail(s->status_fd, ST_WORKSPACE_MOVED);
    }
    int tree = (int)syscall(SYS_open_tree, fd, "",
                            SBX_OPEN_TREE_CLONE | AT_EMPTY_PATH | O_CLOEXEC);
    if (tree < 0)
        fail(s->status_fd, ST_IDMAP_WORKSPACE);
    struct sbx_mount_attr ma = { SBX_MOUNT_ATTR_NOSUID | SBX_MOUNT_ATTR_NODEV, 0, 0, 0 };
    if (s->idmap_userns_fd >= 0) {
        ma.attr_set |= SBX_MOUNT_ATTR_IDMAP;
        ma.userns_fd = (uint64_t)s->idmap_userns_fd;
    }
    if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &ma, sizeof ma) < 0)
        fail(s->status_fd, ST_IDMAP_WORKSPACE);
    if (s->tmp_options &&
        mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, s->tmp_options) < 0)
        fail(s->status_fd, ST_MOUNT_TMP);
    int where = fd;
    if (stat(s->workspace, &got) < 0 || !same_inode(&want, &got)) {
        /* Hidden by the tmpfs: the same path, made in it. Anywhere else the workspace was moved
         * since it was checked, and nothing may be made on the host's filesystem. */
        if (!s->tmp_options || strncmp(s->workspace, "/tmp/", 5) != 0) {
            errno = ESTALE;
            fail(s->status_fd, ST_WORKSPACE_MOVED);
        }
        if (make_dirs(s->workspace) < 0)
            fail(s->status_fd, ST_MOUNT_TMP);
        close(fd);
        fd = open(s->workspace, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            fail(s->status_fd, ST_MOUNT_TMP);
        where = fd;
    }
    if (syscall(SYS_move_mount, tree, "", where, "",
                SBX_MOVE_MOUNT_F_EMPTY_PATH | SBX_MOVE_MOUNT_T_EMPTY_PATH) < 0)
        fail(s->status_fd, ST_IDMAP_WORKSPACE);
    close(fd);
    return tree;
}

/* The filter is data (safefs/sandbox/seccomp.py assembles it); installing it is one call. */
long sbx_install_seccomp(const void *filter, unsigned short len)
{
    struct sock_fprog prog = { len, (struct sock_filter *)filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    return neg_errno(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0));
}

struct command_args {
    const struct sbx_spec *spec;
    int ws_fd;
};

static void set_limit(int status_fd, int resource, uint64_t value)
{
    if (!value)
        return;
    struct rlimit rl = { value, value };
    struct rlimit cur;
    if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < value)
        rl.rlim_cur = rl.rlim_max = cur.rlim_max; /* never raise a limit we were given */
    if (setrlimit(resource, &rl) < 0)
        fail(status_fd, ST_RLIMIT);
}

/* The command: runs on its own stack while init waits (CLONE_VFORK); ends in exec or _exit. */
static int command_main(void *arg)
{
    const struct command_args *a = arg;
    const struct sbx_spec *s = a->spec;
    int st = s->status_fd;

    if (setsid() < 0)
        fail(st, ST_STDIO);
    set_limit(st, RLIMIT_CPU, s->rlim_cpu);
    set_limit(st, RLIMIT_AS, s->rlim_as);
    set_limit(st, RLIMIT_FSIZE, s->rlim_fsize);
    set_limit(st, RLIMIT_NOFILE, s->rlim_nofile);
    set_limit(st, RLIMIT_NPROC, s->rlim_nproc);
    /* Raw system calls: these change this task only. */
    if (s->drop_gid >= 0) {
        if (syscall(SYS_setgroups, 0, NULL) < 0)
            fail(st, ST_DROP_GROUPS);
        if (syscall(SYS_setresgid, s->drop_gid, s->drop_gid, s->drop_gid) < 0)
            fail(st, ST_DROP_GID);
    }
    if (s->drop_uid >= 0 && syscall(SYS_setresuid, s->drop_uid, s->drop_uid, s->drop_uid) < 0)
        fail(st, ST_DROP_UID);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        fail(st, ST_NO_NEW_PRIVS);
    if (s->ruleset_fd >= 0 && syscall(SYS_landlock_restrict_self, s->ruleset_fd, 0) < 0)
        fail(st, ST_LANDLOCK);
    /* The session keyring is inherited, and keys are not namespaced: a fresh, empty one (a
     * kernel without keys has nothing to share). The filter then refuses the key calls. */
    if (s->new_session_keyring &&
        syscall(SYS_keyctl, SBX_KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
        fail(st, ST_KEYRING);
    if (s->seccomp_len && sbx_install_seccomp(s->seccomp_filter, s->seccomp_len) < 0)
        fail(st, ST_SECCOMP);
    if (fchdir(a->ws_fd) < 0)
        fail(st, ST_CHDIR);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(s->out_fd, 1) < 0 || dup2(s->out_fd, 2) < 0)
        fail(st, ST_STDIO);
    /* Whatever else this process holds (the agent's sockets, files) is closed by exec. */
    syscall(SYS_close_range, 3, ~0U, SBX_CLOSE_RANGE_CLOEXEC);
    /* Default dispositions first (the agent ignores SIGPIPE, and exec keeps "ignored"), and only
     * then the signals init inherited blocked. */
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(s->exe, s->argv, s->envp);
    fail(st, ST_EXEC);
    return 127;
}

static int init_main(void *arg)
{
    const struct sbx_spec *s = arg;
    int st = s->status_fd;
    int ws = s->workspace_fd;

    /* Dumpability is the agent's own (init shares its memory): the agent sets it, not init. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        fail(st, ST_PDEATHSIG);
    if (s->clone_flags & CLONE_NEWUSER) {
        /* The parent writes our id maps; EOF instead of the go byte means it could not. */
        char go;
        if (read(s->sync_fd, &go, 1) != 1)
            _exit(127);
        close(s->sync_fd);
    }
    if (s->clone_flags & CLONE_NEWNS) {
        /* Nothing mounted here may propagate back to the host. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
            fail(st, ST_MOUNT_PRIVATE);
        if (s->mount_proc &&
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
            fail(st, ST_MOUNT_PROC);
        /* $TMPDIR, a tmpfs on /tmp (mounted by open_workspace), lives and dies with this mount
         * namespace: nothing is left on the host, even when the agent is killed. */
        if (s->workspace) {
            ws = open_workspace(s);
            if (bind_paths(ws, s->pinned, 0) < 0 ||
                bind_paths(ws, s->read_only, SBX_MOUNT_ATTR_RDONLY | SBX_MOUNT_ATTR_NOSUID |
                                                 SBX_MOUNT_ATTR_NODEV) < 0 ||
                cover_paths(ws, s->hidden) < 0)
                fail(st, ST_PROTECT_GIT);
        }
    }
    if (s->ruleset_fd >= 0 && s->tmp_access && s->tmp_options) {
        int tmp = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (tmp < 0 || sbx_landlock_add_path(s->ruleset_fd, tmp, s->tmp_access) < 0)
            fail(st, ST_LANDLOCK_TMP);
        close(tmp);
    }
    if (s->ruleset_fd >= 0 && s->proc_access && s->mount_proc) {
        /* The fresh /proc is a new inode: only now can a rule name it. */
        int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (proc < 0 || sbx_landlock_add_path(s->ruleset_fd, proc, s->proc_access) < 0)
            fail(st, ST_LANDLOCK_PROC);
        close(proc);
    }

    void *stack = mmap(NULL, COMMAND_STACK_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        fail(st, ST_START_COMMAND);
    struct command_args args = { s, ws };
    pid_t cmd = clone(command_main, (char *)stack + COMMAND_STACK_SIZE,
                      CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
    if (cmd < 0)
        fail(st, ST_START_COMMAND);
    munmap(stack, COMMAND_STACK_SIZE);
    /* The command has exec'ed (or reported why not): the caller's thread may go on. */
    ssize_t ignored = write(s->ready_fd, "1", 1);
    (void)ignored;

    /* init keeps only the status pipe: a copy of the output pipe would hold it open. */
    if (st > 0)
        syscall(SYS_close_range, 0, (unsigned)st - 1, 0);
    syscall(SYS_close_range, (unsigned)st + 1, ~0U, 0);

    /* Reap orphans until the command itself ends (the command is alive until then, so waitpid
     * cannot fail, and with every signal blocked it is never interrupted). */
    int status;
    while (waitpid(-1, &status, 0) != cmd)
        ;
    report(st, 'X', 0, status);
    /* Wait for the parent to list what is left and kill us, and with us all of it. */
    for (;;)
        pause();
    return 0;
}

static pthread_mutex_t dumpable_lock = PTHREAD_MUTEX_INITIALIZER;

/* A new user namespace's maps are written from here, the parent namespace. /proc/<init>/uid_map
 * belongs to root while init's memory (ours, CLONE_VM) is not dumpable, so for the few system
 * calls this takes the process is made dumpable again, under a lock, and then restored. */
static int write_maps_of(pid_t pid, const struct sbx_spec *spec)
{
    char dir[32] = "/proc/";
    size_t n = 6 + put_uint(dir + 6, (unsigned long)pid);
    dir[n] = 0;
    pthread_mutex_lock(&dumpable_lock);
    int was = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (was == 0)
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    int r = write_id_maps(dir, spec->map_uid, spec->map_uid, spec->map_gid, spec->map_gid, 1);
    int saved = errno;
    if (was == 0)
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    pthread_mutex_unlock(&dumpable_lock);
    errno = saved;
    return r;
}

/* Until init writes its byte (or exits: EOF) it runs on this thread's errno: wait here. A
 * deadline stands in for the byte only if init vanished while a fork of another thread still
 * holds the pipe's write end. With every signal blocked neither call can be interrupted. */
static void wait_until_started(int ready_fd)
{
    struct pollfd p = { ready_fd, POLLIN, 0 };
    char byte;
    if (poll(&p, 1, 60 * 1000) == 1) {
        ssize_t ignored = read(ready_fd, &byte, 1);
        (void)ignored;
    }
}

long sbx_spawn(struct sbx_spec *spec)
{
    int sync[2] = { -1, -1 }, ready[2];
    int userns = (spec->clone_flags & CLONE_NEWUSER) != 0;
    if (pipe2(ready, O_CLOEXEC) < 0)
        return -errno;
    if (userns && pipe2(sync, O_CLOEXEC) < 0) {
        long r = -errno;
        close(ready[0]);
        close(ready[1]);
        return r;
    }
    spec->sync_fd = sync[0];
    spec->ready_fd = ready[1];
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    long pid = clone(init_main, spec->init_stack + spec->init_stack_size,
                     spec->clone_flags | CLONE_VM | SIGCHLD, (void *)spec);
    long r = pid < 0 ? -errno : pid;
    close(ready[1]);
    if (userns) {
        if (pid >= 0) {
            if (write_maps_of((pid_t)pid, spec) == 0) {
                if (write(sync[1], "1", 1) != 1)
                    r = -errno;
            } else {
                r = -errno;
            }
            if (r < 0) {
                kill((pid_t)pid, SIGKILL);
                while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
                    ;
            }
        }
        close(sync[0]);
        close(sync[1]);
    }
    if (r >= 0)
        wait_until_started(ready[0]);
    close(ready[0]);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* A user namespace whose only mapping shows ondisk ids as the shown ones: what an idmapped mount
 * needs. A child is created in it, the maps written from here, and its namespace kept by fd. */
static int idle_child(void *arg)
{
    const int *pipefd = arg;
    char c;
    close(pipefd[1]); /* so that the parent's close is the end of the pipe */
    ssize_t ignored = read(pipefd[0], &c, 1);
    (void)ignored;
    _exit(0);
}

long sbx_make_idmap_userns(int ondisk_uid, int ondisk_gid, int shown_uid, int shown_gid)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return -errno;
    size_t size = 16 * 1024;
    char *stack = malloc(size);
    long result;
    if (!stack) {
        result = -ENOMEM;
        goto out;
    }
    pid_t pid = clone(idle_child, stack + size, CLONE_NEWUSER | SIGCHLD, pipefd);
    if (pid < 0) {
        result = -errno;
        goto out;
    }
    char dir[32] = "/proc/";
    size_t n = 6 + put_uint(dir + 6, (unsigned long)pid);
    dir[n] = 0;
    /* In an idmapped mount an on-disk id is the namespace's "inside" id. */
    if (write_id_maps(dir, ondisk_uid, shown_uid, ondisk_gid, shown_gid, 0) < 0) {
        result = -errno;
    } else {
        memcpy(dir + n, "/ns/user", 9);
        int fd = open(dir, O_RDONLY | O_CLOEXEC);
        result = fd < 0 ? -errno : fd;
    }
    close(pipefd[1]);
    pipefd[1] = -1;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
out:
    free(stack);
    close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    return result;
}
